// The deep cursor of the contacts-cursor-deep case (docs/decisions.md §18): the REST cursor a
// client holds after paging `skip` rows of the main account's contacts, newest first, made with the
// service's own encoding (src/graphql/keyset.ts), so the case asks what a syncing client asks.
import pg from 'pg';
import { cursorKeyOf, encodeCursor, fingerprintOf } from '../../src/graphql/keyset.js';
import { BENCH_JWT_SECRET } from './common.js';

/** The `next_cursor` that follows row `skip` (0-based) of `accountId`'s contacts in the default order. */
export async function deepCursor(url: string, accountId: string, skip: number): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ k: string; id: string }>(
      'SELECT created_at::text AS k, id::text AS id FROM contacts WHERE account_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1',
      [accountId, skip],
    );
    if (!rows[0]) throw new Error(`the account holds fewer than ${skip + 1} contacts`);
    const fingerprint = fingerprintOf('Contact', { field: 'CREATED_AT', direction: 'DESC' }, {}, accountId);
    // Signed as the bench's service signs (no CURSOR_SECRET: its AUTH_JWT_SECRET's key).
    return encodeCursor(cursorKeyOf(BENCH_JWT_SECRET), fingerprint, { value: rows[0].k, id: rows[0].id });
  } finally {
    await client.end();
  }
}
