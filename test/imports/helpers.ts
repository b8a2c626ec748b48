// Importing in tests: POST a CSV as clients do, and run the worker's claim loop to its end in the
// test (no background worker, so no test waits on a poll).
import { randomUUID } from 'node:crypto';
import { drainImports } from '../../src/imports/worker.js';
import type { TestApp, TestUser } from '../helpers/app.js';

export function importCsv(t: TestApp, as: TestUser, accountId: string, csv: string, params: Record<string, string> = {}, headers: Record<string, string> = {}) {
  const query = new URLSearchParams({ account_id: accountId, object: 'contacts', ...params });
  return t.rest('POST', `/api/v1/imports?${query}`, { as, rawBody: csv, headers: { 'content-type': 'text/csv', ...headers } });
}

export const silentLog = { warn: () => {}, info: () => {}, debug: () => {}, error: () => {} } as never;

/** Runs every due import to its end, as one instance's worker would; answers how many it ran. */
export const drain = (t: TestApp, owner = randomUUID()) => drainImports(t.db, owner, { leaseMs: 60_000, pollMs: 1000, log: silentLog }, () => true);

/** POSTs a file's bytes as they are (another encoding than UTF-8, a BOM), with `params` in the query. */
export async function importBytes(t: TestApp, as: TestUser, accountId: string, bytes: Buffer, params: Record<string, string> = {}, contentType = 'text/csv') {
  const query = new URLSearchParams({ account_id: accountId, object: 'contacts', ...params });
  const response = await fetch(`${t.baseUrl}/api/v1/imports?${query}`, { method: 'POST', body: new Uint8Array(bytes), headers: { authorization: `Bearer ${as.token}`, 'content-type': contentType } });
  return { status: response.status, body: (await response.json()) as { data?: any; error?: string; details?: Record<string, string[]> } };
}
