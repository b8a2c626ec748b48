// The bench's API key (docs/decisions.md §15): one key of the main account with CONTACTS_READ, made
// fresh for each run (the secret is never stored), so the contacts-api-key case can send it.
import pg from 'pg';
import { newSecret } from '../../src/auth/api-key-secret.js';

const NAME = 'bench:contacts-api-key';

/** Replaces the bench's key of `accountId` and returns its secret. */
export async function benchApiKey(url: string, accountId: string): Promise<string> {
  const { secret, prefix, hash } = newSecret();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('DELETE FROM api_keys WHERE account_id = $1 AND name = $2', [accountId, NAME]);
    await client.query(
      `INSERT INTO api_keys (id, account_id, name, prefix, secret_hash, scopes) VALUES (gen_random_uuid(), $1, $2, $3, $4, ARRAY['CONTACTS_READ'])`,
      [accountId, NAME, prefix, hash],
    );
    return secret;
  } finally {
    await client.end();
  }
}
