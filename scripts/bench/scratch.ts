// What the latency benches (event-latency.ts, revocation.ts) stand on: the service's configuration
// and database (DATABASE_URL's, else an embedded one in memory), migrated, with one account of their own.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { applyMigrations } from '../../src/db/migrate.js';

/** `env` overrides the process's; DATA_DIR (where the development webhook key is written) is a temp directory, never the checkout. */
export async function openScratch(name: string, env: Record<string, string> = {}) {
  const dataDir = await mkdtemp(path.join(tmpdir(), `crm-${name}-`));
  const config = loadConfig({ ...process.env, ...env, DATA_DIR: dataDir });
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: 'memory://' });
  await applyMigrations(db);
  const [{ id: accountId }] = await db.prisma.$queryRaw<[{ id: string }]>`
    WITH owner AS (INSERT INTO users (id) VALUES (gen_random_uuid()) RETURNING id)
    INSERT INTO accounts (id, name, owner_id) SELECT gen_random_uuid(), ${name}, id FROM owner RETURNING id`;
  return { config, db, accountId, close: async () => (await db.close(), await rm(dataDir, { recursive: true, force: true })) };
}
