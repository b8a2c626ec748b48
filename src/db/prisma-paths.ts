import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type MigrationPaths = { schemaPath: string; migrationsDir: string };

/** prisma/ next to the sources, found by walking up so it also works from the compiled dist/. */
export function defaultPaths(): MigrationPaths {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'prisma', 'schema.prisma'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('prisma/schema.prisma not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return { schemaPath: path.join(dir, 'prisma', 'schema.prisma'), migrationsDir: path.join(dir, 'prisma', 'migrations') };
}
