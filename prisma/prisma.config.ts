import { existsSync } from 'node:fs';
import path from 'node:path';
import { defineConfig } from 'prisma/config';

// The Prisma CLI downloads a native schema engine before every command, and that host is not
// reachable from our machines. `generate` never runs the engine: naming any existing file here
// skips the download. Migrations run through @prisma/schema-engine-wasm instead (src/db/migrate.ts).
const here = path.dirname(new URL(import.meta.url).pathname);
const placeholder = path.join(here, 'schema.prisma');
if (!process.env.PRISMA_SCHEMA_ENGINE_BINARY && existsSync(placeholder)) {
  process.env.PRISMA_SCHEMA_ENGINE_BINARY = placeholder;
}

export default defineConfig({
  schema: path.join(here, 'schema.prisma'),
  migrations: { path: path.join(here, 'migrations') },
  ...(process.env.DATABASE_URL ? { datasource: { url: process.env.DATABASE_URL } } : {}),
});
