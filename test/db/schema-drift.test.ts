import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { defaultPaths, diffMigrationsAgainstSchema } from '../../src/db/migrate.js';

// Replays prisma/migrations into a throwaway in-memory PGlite and compares it with schema.prisma.
describe('schema drift', { timeout: 180_000 }, () => {
  it('schema.prisma and the migrations agree (run `npm run migrate:create <name>` if not)', async () => {
    expect(await diffMigrationsAgainstSchema()).toBe('');
  });

  it('a schema change that has no migration is reported as drift', async () => {
    const schema = await readFile(defaultPaths().schemaPath, 'utf8');
    const changed = `${schema}\nmodel DriftProbe {\n  id Int @id\n\n  @@map("drift_probe")\n}\n`;
    const drift = await diffMigrationsAgainstSchema({ schema: changed });
    expect(drift).toContain('CREATE TABLE "drift_probe"');
  });
});
