// Readiness = database reachable AND every migration folder of this build applied (src/plugins/use-health.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationNames } from '../../src/db/migrate.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => void (t = await createTestApp()));
afterAll(() => t?.close());

describe('readiness checks migrations', () => {
  it('/readyz is 200 ready on a database with every migration applied', async () => {
    const ready = await t.rest('GET', '/readyz');
    expect({ status: ready.status, body: ready.body }).toEqual({ status: 200, body: { status: 'ready' } });
  });

  it('/readyz is 503 while a migration is recorded as rolled back, and ready again once it is not', async () => {
    // `prisma migrate resolve --rolled-back` records it this way: the schema lacks that migration.
    const first = (await migrationNames())[0];
    await t.db.$executeRawUnsafe('UPDATE _prisma_migrations SET rolled_back_at = now() WHERE migration_name = $1', first);
    expect((await t.rest('GET', '/readyz')).status).toBe(503);
    await t.db.$executeRawUnsafe('UPDATE _prisma_migrations SET rolled_back_at = NULL WHERE migration_name = $1', first);
    expect((await t.rest('GET', '/readyz')).status).toBe(200);
  });

  it('/readyz is 503 unavailable once one migration is missing from _prisma_migrations, while /healthz stays 200', async () => {
    const names = await migrationNames();
    expect(names.length).toBeGreaterThan(0);
    const latest = names.at(-1)!;
    // This database is the test file's own clone, so editing its bookkeeping touches nobody else.
    const deleted = await t.db.$executeRawUnsafe('DELETE FROM _prisma_migrations WHERE migration_name = $1', latest);
    expect(deleted).toBe(1);

    const ready = await t.rest('GET', '/readyz');
    expect({ status: ready.status, body: ready.body }).toEqual({ status: 503, body: { status: 'unavailable' } });
    const live = await t.rest('GET', '/healthz');
    expect({ status: live.status, body: live.body }).toEqual({ status: 200, body: { status: 'ok' } });
  });
});
