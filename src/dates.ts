/** A calendar day as the APIs show it: YYYY-MM-DD, in UTC (docs/decisions.md §3). */
export const formatDate = (date: Date): string => date.toISOString().slice(0, 10);
