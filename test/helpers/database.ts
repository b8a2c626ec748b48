import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { Bounds } from '../../src/db/bounds.js';
import { openDatabase, type Database } from '../../src/db/client.js';
import { applyMigrations } from '../../src/db/migrate.js';
import { PGLITE_EXTENSIONS } from '../../src/db/migration-adapters.js';

/**
 * Each test file gets its own database, cloned from one migrated template made once per run:
 * PostgreSQL `CREATE DATABASE ... TEMPLATE` when DATABASE_URL is set, else PGlite in memory loaded
 * from the template's dump (a server started as a child process gets a copy of its directory).
 */
export type TemplateRef = { kind: 'postgres'; url: string; name: string } | { kind: 'pglite'; dir: string; dump: string };

const withDatabase = (url: string, name: string): string => {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
};

/**
 * A copy of the template's directory (42 MB in 1,263 files). The system's `cp -R` takes 0.2 s of CPU
 * where Node's fs.cp took 1.1-2.3 s, and every file that starts an app copies one; where there is
 * no `cp` (Windows), fs.cp.
 */
async function copyDir(from: string, to: string): Promise<void> {
  const copied = await new Promise<boolean>((resolve) => execFile('cp', ['-R', `${from}/.`, to], (error) => resolve(!error)));
  if (!copied) await cp(from, to, { recursive: true, force: true });
}

async function admin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function createTemplate(): Promise<TemplateRef> {
  const url = process.env.DATABASE_URL;
  if (url) {
    const name = `crm_template_${randomUUID().slice(0, 8)}`;
    await admin(url, (c) => c.query(`CREATE DATABASE ${name}`));
    const db = await openDatabase({ databaseUrl: withDatabase(url, name), dataDir: '' , poolMax: 1 });
    await applyMigrations(db);
    await db.close();
    return { kind: 'postgres', url, name };
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'crm-template-'));
  const db = await openDatabase({ dataDir: dir });
  await applyMigrations(db);
  await db.close();
  // The same database as a dump, which a file's in-memory copy loads in about half the time that
  // copying the directory (44 MB in 1,263 files) and opening it take (docs/testing-prerequisites.md#speed).
  const dump = `${dir}.tar`;
  const pglite = await PGlite.create({ dataDir: dir, extensions: PGLITE_EXTENSIONS });
  await writeFile(dump, Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer()));
  await pglite.close();
  return { kind: 'pglite', dir, dump };
}

export async function dropTemplate(template: TemplateRef): Promise<void> {
  if (template.kind === 'postgres') {
    await admin(template.url, (c) => c.query(`DROP DATABASE IF EXISTS ${template.name} WITH (FORCE)`));
  } else {
    await rm(template.dir, { recursive: true, force: true });
    await rm(template.dump, { force: true });
  }
}

/** The template's dump, read once per worker (a worker keeps this module between files: isolate: false). */
let dumpRead: { path: string; blob: Promise<Blob> } | undefined;
function dumpOf(template: Extract<TemplateRef, { kind: 'pglite' }>): Promise<Blob> {
  if (dumpRead?.path !== template.dump) dumpRead = { path: template.dump, blob: readFile(template.dump).then((bytes) => new Blob([bytes])) };
  return dumpRead.blob;
}

/**
 * The run's template, or, when no global setup made one (a file run without test/vitest.config.ts,
 * e.g. `npx vitest run <file>` from the root as IDEs do), one of this file's own, dropped with its copy.
 */
async function templateFor(run: TemplateRef | undefined): Promise<{ template: TemplateRef; dropOwn(): Promise<void> }> {
  if (run) return { template: run, dropOwn: async () => {} };
  const own = await createTemplate();
  return { template: own, dropOwn: () => dropTemplate(own) };
}

/** A fresh database for one test file (with these waits, else the defaults), and how to throw it away. */
export async function cloneDatabase(run: TemplateRef | undefined, bounds: Partial<Bounds> = {}): Promise<{ db: Database; drop(): Promise<void> }> {
  const { template, dropOwn } = await templateFor(run);
  if (template.kind === 'postgres') {
    const name = `crm_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
    await admin(template.url, (c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${template.name}`));
    const db = await openDatabase({ databaseUrl: withDatabase(template.url, name), dataDir: '', poolMax: 5, bounds });
    return {
      db,
      drop: async () => {
        await db.close();
        await admin(template.url, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
        await dropOwn();
      },
    };
  }
  // In memory: nothing the file does touches the disk, and its drop is the close.
  const db = await openDatabase({ dataDir: 'memory://', loadDataDir: await dumpOf(template), bounds });
  return {
    db,
    drop: async () => {
      await db.close();
      await dropOwn();
    },
  };
}

/**
 * A fresh database for a server started as a child process (test/e2e): the environment that points
 * it there (DATABASE_URL, or DATA_DIR for PGlite, which only that process may then open), and how
 * to throw it away once the process has exited.
 */
export async function cloneDatabaseForProcess(run: TemplateRef | undefined): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  const { template, dropOwn } = await templateFor(run);
  if (template.kind === 'postgres') {
    const name = `crm_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
    await admin(template.url, (c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${template.name}`));
    return {
      env: { DATABASE_URL: withDatabase(template.url, name) },
      drop: async () => {
        await admin(template.url, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
        await dropOwn();
      },
    };
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'crm-test-'));
  await copyDir(template.dir, dir);
  return { env: { DATA_DIR: dir }, drop: async () => {
    await rm(dir, { recursive: true, force: true });
    await dropOwn();
  } };
}
