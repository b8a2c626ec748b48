import type { Role } from '../auth/access.js';
import type { ApiScope } from '../scopes.js';
import type { Viewer } from '../auth/viewer.js';
import type { Context } from '../context.js';
import { EVENT_TYPES, type EventType, type RecordKind } from './types.js';

/**
 * What an API key needs to read an event, by the kind of record it carries (docs/decisions.md §15):
 * that kind's scope, as through any other field; false for what keys never read (people, the
 * account, keys, webhooks, the other records). A new kind of event does not compile until it says.
 */
const KEY_SCOPE_OF: Record<RecordKind, ApiScope | false> = {
  contact: 'CONTACTS_READ',
  deal: 'DEALS_READ',
  company: 'COMPANIES_READ',
  note: 'ACTIVITIES_READ',
  task: 'ACTIVITIES_READ',
  pipeline_stage: 'DEALS_READ',
  invoice: 'INVOICES_READ',
  payment: 'INVOICES_READ',
  form: 'FORMS_READ',
  import: 'IMPORTS',
  export: 'EXPORTS',
  account: false,
  member: false,
  ownership: false,
  api_key: false,
  webhook_endpoint: false,
  proposal: false,
  contract: false,
  gallery: false,
  booking: false,
  workflow: false,
};

/** What only the owner manages (decisions §15, events.md#webhooks): a member does not read its events either. */
const OWNER_ONLY = new Set<RecordKind>(['api_key', 'webhook_endpoint']);

const kindOf = (type: EventType) => type.slice(0, type.indexOf('.')) as RecordKind;

/**
 * The event types the caller may read in the account, on every door (the feed, connections, by id,
 * live): the owner all of them (null), a member all but the owner's own, an API key those its
 * scopes read.
 */
export async function visibleEventTypes(ctx: Context, accountId: string): Promise<Set<string> | null> {
  const viewer = await ctx.viewer();
  return visibleTo(viewer, viewer.apiKey ? null : await ctx.role(accountId));
}

/** The same, for a role the caller has just read (a live stream's re-check after a team change). */
export function visibleTo(viewer: Viewer, role: Role | null): Set<string> | null {
  const keyScopes = viewer.apiKey?.scopes;
  if (keyScopes) {
    return new Set(EVENT_TYPES.filter((type) => {
      const scope = KEY_SCOPE_OF[kindOf(type)];
      return scope !== false && keyScopes.has(scope);
    }));
  }
  if (role === 'owner') return null;
  return new Set(EVENT_TYPES.filter((type) => !OWNER_ONLY.has(kindOf(type))));
}
