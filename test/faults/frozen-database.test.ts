/**
 * A hung database gives 503s within the statement bound, not hung requests (docs/faults.md
 * "Bounds"): PostgreSQL frozen with SIGSTOP (every process of a cluster this file creates with
 * initdb on a free port; never the machine's own server), then thawed: the service recovers.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken } from '../../src/auth/token.js';
import { killServer, missingServices, PrivatePostgres, startServer, type ServerProcess } from '../../scripts/soak/services.js';
import { TEST_SECRET } from '../helpers/app.js';
import { skipIfMissing } from '../helpers/prerequisites.js';
import { ownerGql, tally } from './service.js';

const STATEMENT_TIMEOUT_MS = 2_000;
/** decisions §14: within the statement timeout, plus 2 s for the client-side grace and the answer. */
const BOUND_MS = STATEMENT_TIMEOUT_MS + 2_000;

describe.skipIf(skipIfMissing(missingServices()))('PostgreSQL frozen (SIGSTOP) under requests', () => {
  let dir: string;
  let postgres: PrivatePostgres;
  let server: ServerProcess;
  let accountId: string;
  let formId: string;
  let token: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'crm-frozen-'));
    postgres = await PrivatePostgres.create(dir);
    server = await startServer({
      DATABASE_URL: postgres.url,
      AUTH_JWT_SECRET: TEST_SECRET,
      TRUST_PROXY: '1',
      DATABASE_POOL_MAX: '4',
      DATABASE_POOL_TIMEOUT_MS: '1000',
      DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
    });
    token = await mintToken(TEST_SECRET, { sub: randomUUID() });
    accountId = (await ownerGql(server.baseUrl, token, 'mutation { createAccount(input: { name: "Frozen" }) { id } }')).createAccount.id;
    formId = (
      await ownerGql(server.baseUrl, token, 'mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }', {
        input: { accountId, name: 'Frozen', fields: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' }] },
      })
    ).createLeadForm.id;
  }, 240_000);

  afterAll(async () => {
    postgres?.thaw();
    await killServer(server);
    postgres?.stop('immediate');
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 120_000);

  const request = async (i: number) => {
    const [url, init]: [string, RequestInit] =
      i % 3 === 0
        ? [`/api/v1/contacts?account_id=${accountId}`, { headers: { authorization: `Bearer ${token}` } }]
        : i % 3 === 1
          ? ['/api/v1/contacts', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ account_id: accountId, first_name: `Frozen ${i}` }) }]
          : [`/api/v1/forms/${formId}/submit`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.7.0.${i}` }, body: JSON.stringify({ data: { email: `frozen-${i}@example.com` } }) }];
    const started = Date.now();
    try {
      const r = await fetch(`${server.baseUrl}${url}`, { ...init, signal: AbortSignal.timeout(60_000) });
      return { status: r.status, body: await r.text(), retryAfter: r.headers.get('retry-after'), ms: Date.now() - started };
    } catch (error) {
      return { error: String(error), ms: Date.now() - started };
    }
  };

  it('every request answers 503 {"error":"Service unavailable"} with Retry-After within the statement timeout + 2 s', async () => {
    // Warm: the pool holds open connections, which a frozen server leaves hanging (no error, no answer).
    expect(tally(await Promise.all([0, 1, 2, 3, 4, 5].map(request)))).toEqual({ 200: 4, 201: 2 });
    postgres.freeze();
    let answers;
    try {
      answers = await Promise.all(Array.from({ length: 12 }, (_, i) => request(i + 10)));
    } finally {
      postgres.thaw();
    }
    expect(tally(answers)).toEqual({ 503: 12 });
    for (const a of answers) {
      expect(a.body).toBe('{"error":"Service unavailable"}');
      expect(Number(a.retryAfter)).toBeGreaterThan(0);
      expect(a.ms, 'answered within the statement bound').toBeLessThan(BOUND_MS);
    }
  }, 60_000);

  it('thawed, the service recovers by itself', async () => {
    let answers: Awaited<ReturnType<typeof request>>[] = [];
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
      answers = await Promise.all([30, 31, 32].map(request));
      if (answers.every((a) => a.status === 200 || a.status === 201)) break;
    }
    expect(tally(answers)).toEqual({ 200: 2, 201: 1 });
  }, 60_000);
});
