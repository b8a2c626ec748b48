// tsx scripts/migrate.ts create <name> | deploy | status
// Talks to DATABASE_URL when set, else to the embedded PGlite in DATA_DIR (default .data).
import path from 'node:path';
import { openDatabase } from '../src/db/client.js';
import { applyMigrations, createMigration, migrationStatus } from '../src/db/migrate.js';

const usage = 'usage: tsx scripts/migrate.ts create <name> | deploy | status';

async function main(args: string[]): Promise<number> {
  const [command, name] = args;
  if (command === 'create') {
    if (!name) throw new Error(usage);
    // Needs no database: the migrations replay into a throwaway in-memory PGlite.
    const file = await createMigration(name);
    console.log(file ? `created ${path.relative(process.cwd(), file)}` : 'schema.prisma matches the migrations: nothing to create');
    return 0;
  }
  if (command !== 'deploy' && command !== 'status') throw new Error(usage);

  const databaseUrl = process.env.DATABASE_URL?.trim() || undefined;
  const dataDir = path.resolve(process.env.DATA_DIR?.trim() || '.data');
  const directUrl = process.env.DATABASE_DIRECT_URL?.trim() || undefined; // migrations bypass PgBouncer
  const db = await openDatabase({ databaseUrl, directUrl, dataDir, poolMax: 1 });
  const where = databaseUrl ? 'PostgreSQL' : `PGlite in ${dataDir}`;
  try {
    if (command === 'deploy') {
      const applied = await applyMigrations(db);
      console.log(applied.length ? `applied to ${where}:\n  ${applied.join('\n  ')}` : `${where} is up to date`);
      return 0;
    }
    const status = await migrationStatus(db);
    console.log(`${where}: ${status.applied.length} applied, ${status.pending.length} pending`);
    const groups = { pending: status.pending, failed: status.failed, edited: status.edited, 'not in the folder': status.unknown };
    for (const [label, names] of Object.entries(groups)) {
      if (names.length) console.log(`${label}:\n  ${names.join('\n  ')}`);
    }
    // Like `prisma migrate status`: non-zero when the database is not exactly the folder.
    return status.pending.length || status.failed.length || status.edited.length || status.unknown.length ? 1 : 0;
  } finally {
    await db.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
