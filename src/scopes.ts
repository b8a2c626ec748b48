/**
 * What an API key may do (docs/decisions.md §15): each root field names the one scope it needs in
 * its `rules` (src/graphql/rules.ts); a field that names none is never open to a key. GraphQL
 * spells them CONTACTS_READ, REST and the CLI contacts:read.
 */
export const API_SCOPES = [
  'CONTACTS_READ', 'CONTACTS_WRITE', 'DEALS_READ', 'DEALS_WRITE', 'COMPANIES_READ', 'COMPANIES_WRITE', 'ACTIVITIES_READ', 'ACTIVITIES_WRITE', 'INVOICES_READ', 'INVOICES_WRITE',
  'FORMS_READ', 'FORMS_WRITE', 'EVENTS_READ', 'IMPORTS', 'EXPORTS', 'WORKFLOWS_READ',
] as const;

export type ApiScope = (typeof API_SCOPES)[number];

export const isApiScope = (value: string): value is ApiScope => (API_SCOPES as readonly string[]).includes(value);

/** CONTACTS_WRITE -> contacts:write, as REST, the CLI and the 403 message name it. */
export const restScope = (scope: ApiScope): string => scope.toLowerCase().replace('_', ':');

/** contacts:write (or CONTACTS_WRITE) -> CONTACTS_WRITE; null when it names no scope. */
export function parseScope(text: string): ApiScope | null {
  const name = text.trim().toUpperCase().replace(':', '_');
  return isApiScope(name) ? name : null;
}
