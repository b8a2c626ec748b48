// What the bench scripts share: the machine's PostgreSQL, the bench database beside it, and the
// fixed secret both servers verify tokens with.
import pg from 'pg';
import { openDatabase } from '../../src/db/client.js';
import { applyMigrations } from '../../src/db/migrate.js';

/** The machine's default, as in CI (.ci/run). */
export const DEFAULT_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/test';

/** HS256 secret of the bench run only (both servers and the token minting use it). */
export const BENCH_JWT_SECRET = 'bench-only-secret-0123456789abcdefghijklmnopqrstuvwxyz';
/** Production refuses to start without a METRICS_TOKEN (docs/startup-errors.md); the bench reads no metrics. */
export const BENCH_METRICS_TOKEN = 'bench-only-metrics-token-0123456789';

export const DEFAULT_CONTACTS = 100_000;

export function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/**
 * The bench database: BENCH_DATABASE_URL as given, else beside DATABASE_URL (or the machine
 * default) named `crm_bench`, or `crm_bench_<N>` for another size, so sizes never overwrite each other.
 */
export function benchDatabaseUrl(contacts: number, env: NodeJS.ProcessEnv = process.env): string {
  if (env.BENCH_DATABASE_URL) return env.BENCH_DATABASE_URL;
  const base = env.DATABASE_URL || DEFAULT_DATABASE_URL;
  return withDatabase(base, contacts === DEFAULT_CONTACTS ? 'crm_bench' : `crm_bench_${contacts}`);
}

/**
 * `--database <name>`: the bench database named, beside DATABASE_URL (or the machine default). Only
 * names starting with `crm_bench`, the ones the bench may fill and, for another size, empty.
 */
export function namedBenchDatabaseUrl(name: string, env: NodeJS.ProcessEnv = process.env): string {
  if (!/^crm_bench\w*$/.test(name)) throw new Error(`--database must be a name starting with crm_bench (letters, digits, _), not "${name}"`);
  return withDatabase(env.DATABASE_URL || DEFAULT_DATABASE_URL, name);
}

const databaseName = (url: string) => decodeURIComponent(new URL(url).pathname.slice(1));
const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Runs `work` on a connection to the server's `postgres` database (to create or drop others). */
export async function withAdmin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  let client = new pg.Client({ connectionString: withDatabase(url, 'postgres') });
  try {
    await client.connect();
  } catch (error) {
    if ((error as { code?: string }).code !== '3D000') throw error; // no `postgres` database here
    client = new pg.Client({ connectionString: withDatabase(url, 'template1') });
    await client.connect();
  }
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates the database when missing; then applies pending migrations (src/db/migrate.ts). */
export async function ensureMigrated(url: string): Promise<{ created: boolean; applied: string[] }> {
  const name = databaseName(url);
  const created = await withAdmin(url, async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount) return false;
    await client.query(`CREATE DATABASE ${quoteIdent(name)}`);
    return true;
  });
  const db = await openDatabase({ databaseUrl: url, dataDir: '', poolMax: 1, onConnectionError: () => {} });
  try {
    return { created, applied: await applyMigrations(db) };
  } finally {
    await db.close();
  }
}

export async function dropDatabase(url: string): Promise<void> {
  await withAdmin(url, (client) => client.query(`DROP DATABASE IF EXISTS ${quoteIdent(databaseName(url))} WITH (FORCE)`));
}

/** `--name value` and `--name=value` flags; bare `--flag` is "true". Unknown flags are refused. */
export function parseFlags(argv: string[], known: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new Error(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (!known.includes(name)) throw new Error(`unknown option --${name} (known: ${known.map((k) => `--${k}`).join(' ')})`);
    if (eq !== -1) out[name] = arg.slice(eq + 1);
    else if (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('--')) out[name] = argv[++i]!;
    else out[name] = 'true';
  }
  return out;
}

export function intFlag(flags: Record<string, string>, name: string, fallback: number, min: number, max: number): number {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const value = Number(raw.replaceAll('_', ''));
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`--${name} must be a whole number from ${min} to ${max}`);
  return value;
}

export function numberFlag(flags: Record<string, string>, name: string, fallback: number, min: number, max: number): number {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) throw new Error(`--${name} must be a number from ${min} to ${max}`);
  return value;
}
