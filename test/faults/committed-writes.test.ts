/**
 * The service never answers an error for a write it committed (decisions.md §14, docs/faults.md):
 * PostgreSQL (a cluster this file creates, never the machine's) is stopped and started during a
 * burst of POST /api/v1/contacts. Every 201 is in the database; every 503 is absent.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken } from '../../src/auth/token.js';
import { killServer, missingServices, PrivatePostgres, startServer, type ServerProcess } from '../../scripts/soak/services.js';
import { TEST_SECRET } from '../helpers/app.js';
import { skipIfMissing } from '../helpers/prerequisites.js';
import { ownerGql, tally } from './service.js';

describe.skipIf(skipIfMissing(missingServices()))('PostgreSQL stopped and started during a burst of creates', () => {
  let dir: string;
  let postgres: PrivatePostgres;
  let server: ServerProcess;
  let accountId: string;
  const users: string[] = [];
  const answers: { name: string; status?: number; error?: string }[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'crm-commit-'));
    postgres = await PrivatePostgres.create(dir);
    server = await startServer({ DATABASE_URL: postgres.url, AUTH_JWT_SECRET: TEST_SECRET });
    const owner = await mintToken(TEST_SECRET, { sub: randomUUID() });
    accountId = (await ownerGql(server.baseUrl, owner, 'mutation { createAccount(input: { name: "Commit" }) { id } }')).createAccount.id;
    for (let i = 0; i < 20; i++) {
      const id = randomUUID();
      await ownerGql(server.baseUrl, owner, 'mutation ($input: AddTeamMemberInput!) { addTeamMember(input: $input) { userId } }', { input: { accountId, userId: id } });
      users.push(await mintToken(TEST_SECRET, { sub: id }));
    }
  }, 240_000);
  afterAll(async () => {
    await killServer(server);
    postgres?.stop('immediate');
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 120_000);

  it('every 201 is stored and every 503 is absent', async () => {
    let running = true;
    let n = 0;
    const workers = users.map(async (token) => {
      while (running) {
        const name = `Commit ${++n}`;
        try {
          const r = await fetch(`${server.baseUrl}/api/v1/contacts`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ account_id: accountId, first_name: name }),
            signal: AbortSignal.timeout(30_000),
          });
          await r.arrayBuffer();
          answers.push({ name, status: r.status });
        } catch (error) {
          answers.push({ name, error: String(error) });
        }
      }
    });
    // Each phase lasts until answers show it, not for a fixed time: writes succeed, then (PostgreSQL
    // stopped) 503s come, then (started again) writes succeed again.
    const answered = (status: number) => answers.filter((a) => a.status === status).length;
    // An answer that is no 201, 429 or 503 ends the wait: the assertions below name it.
    const unexpected = () => answers.some((a) => a.status !== 201 && a.status !== 429 && a.status !== 503);
    const until = async (what: string, condition: () => boolean) => {
      for (const deadline = Date.now() + 120_000; !condition() && !unexpected(); await sleep(50)) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(tally(answers))}`);
      }
    };
    await until('first writes', () => answered(201) >= 20);
    for (let round = 0; round < 3 && !unexpected(); round++) {
      const refused = answered(503);
      postgres.stop('fast');
      await until('503s while PostgreSQL is down', () => answered(503) >= refused + 10);
      postgres.start();
      const created = answered(201);
      await until('writes once PostgreSQL is back', () => answered(201) >= created + 10);
    }
    running = false;
    await Promise.all(workers);

    const counts = tally(answers);
    expect(Object.keys(counts).filter((k) => !['201', '429', '503'].includes(k)), JSON.stringify(counts)).toEqual([]);
    expect(counts['503'], JSON.stringify(counts)).toBeGreaterThan(0);
    const rows = await postgres.query<{ first_name: string }>('SELECT first_name FROM contacts WHERE account_id = $1', [accountId]);
    const stored = new Set(rows.map((r) => r.first_name));
    expect(answers.filter((a) => a.status === 201 && !stored.has(a.name)).map((a) => a.name), 'acknowledged but missing').toEqual([]);
    expect(answers.filter((a) => a.status !== 201 && stored.has(a.name)).map((a) => `${a.name} ${a.status ?? a.error}`), 'stored but answered an error').toEqual([]);
  }, 180_000);
});
