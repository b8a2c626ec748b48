/** A calendar day as the APIs show it: YYYY-MM-DD, in UTC (docs/decisions.md §3). */
export const formatDate = (date: Date): string => date.toISOString().slice(0, 10);

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** PostgreSQL's calendar has no year 0 (1 BC): years 1 to 9999, as the four digits allow. */
export const inStorableYears = (date: Date) => date.getUTCFullYear() >= 1 && date.getUTCFullYear() <= 9999;

/** YYYY-MM-DD that names a real calendar day (no 2025-02-30), as UTC midnight. */
export function calendarDay(value: unknown): Date | null {
  const match = typeof value === 'string' ? DATE.exec(value) : null;
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year); // Date.UTC reads years 0-99 as 1900-1999
  const real = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  return real ? date : null;
}

/** A real calendar day the database can store (from year 1), as UTC midnight. */
export function parseCalendarDate(value: unknown): Date | null {
  const date = calendarDay(value);
  return date && inStorableYears(date) ? date : null;
}
