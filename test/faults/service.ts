/** A server process of the service for a fault test, on a clone of the run's template, with one account and lead form. */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { inject } from 'vitest';
import { mintToken } from '../../src/auth/token.js';
import { openDatabase, type Database } from '../../src/db/client.js';
import { ROOT, startServer, type ServerProcess } from '../../scripts/soak/services.js';
import { cloneDatabaseForProcess } from '../helpers/database.js';
import { TEST_SECRET } from '../helpers/app.js';

export const BUSY_LOOP = path.join(ROOT, 'test/faults/busy-loop.ts');

export type FaultService = {
  server: ServerProcess;
  accountId: string;
  formId: string;
  ownerToken: string;
  /** Stops the server (SIGTERM, then waits), opens its database, runs `check`, and closes it. */
  inspect<T>(check: (db: Database) => Promise<T>): Promise<T>;
  /** Kills the server if still running and drops its database. */
  close(): Promise<void>;
};

/** GraphQL as the account's owner; throws on any error. */
export async function ownerGql(baseUrl: string, token: string, query: string, variables: Record<string, unknown> = {}) {
  const r = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await r.json()) as { data: any; errors?: unknown };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

export async function startFaultService(env: Record<string, string>, preload: string[] = []): Promise<FaultService> {
  const clone = await cloneDatabaseForProcess(inject('template'));
  let server: ServerProcess;
  try {
    server = await startServer({ AUTH_JWT_SECRET: TEST_SECRET, TRUST_PROXY: '1', ...clone.env, ...env }, { preload });
  } catch (error) {
    await clone.drop();
    throw error;
  }
  const ownerToken = await mintToken(TEST_SECRET, { sub: randomUUID() });
  const gql = (query: string, variables?: Record<string, unknown>) => ownerGql(server.baseUrl, ownerToken, query, variables);
  const accountId = (await gql('mutation { createAccount(input: { name: "Faults" }) { id } }')).createAccount.id as string;
  const formId = (
    await gql('mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }', {
      input: { accountId, name: 'Faults', fields: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' }] },
    })
  ).createLeadForm.id as string;
  const stop = async () => {
    if (server.proc.exitCode !== null || server.proc.signalCode !== null) return;
    server.proc.kill('SIGTERM');
    await server.exit;
  };
  return {
    server,
    accountId,
    formId,
    ownerToken,
    async inspect(check) {
      await stop();
      const db = await openDatabase(clone.env.DATABASE_URL ? { databaseUrl: clone.env.DATABASE_URL, dataDir: '' } : { dataDir: clone.env.DATA_DIR! });
      try {
        return await check(db);
      } finally {
        await db.close();
      }
    },
    async close() {
      if (server.proc.exitCode === null && server.proc.signalCode === null) {
        server.proc.kill('SIGKILL');
        await server.exit;
      }
      await clone.drop();
    },
  };
}

/** Counts of each status (or transport error) among answers. */
export const tally = (answers: { status?: number; error?: string }[]) =>
  answers.reduce<Record<string, number>>((n, a) => {
    const key = String(a.status ?? a.error);
    return { ...n, [key]: (n[key] ?? 0) + 1 };
  }, {});
