/**
 * The request-level protocol of /graphql (docs/decisions.md §9 amended, §11; docs/graphql.md):
 * partial results, automatic persisted queries, GET, trusted documents and batching.
 */
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { GRAPHQL_LIMITS } from '../../src/graphql/armor.js';
import { redisDocumentStore } from '../../src/graphql/persisted.js';
import { sha256 } from '../../src/config.js';
import { MemoryStore } from '../../src/ratelimit/memory-store.js';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { requireRedis, skipIfMissing, TEST_REDIS_URL, unsetVariables } from '../helpers/prerequisites.js';

let t: TestApp;
let acc: TestAccount;

beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

describe('partial results (decisions §9 amended)', () => {
  it('a refused root field is null with its error; the other root fields of the document answer', async () => {
    const foreign = await createAccount(t);
    const r = await t.gql('query ($a: ID!) { me { id } contacts(accountId: $a) { total } }', { a: foreign.id }, { as: acc.owner });
    expect(r.data).toEqual({ me: { id: acc.owner.id }, contacts: null });
    expect(r.errors).toHaveLength(1);
    expect(r.errors![0]).toMatchObject({ path: ['contacts'], extensions: { code: 'FORBIDDEN' } });
  });

  it('six aliased exportContacts with a limit of 5: five get their tickets, the sixth is RATE_LIMITED, five audit rows', async () => {
    const fresh = await createAccount(t);
    const calls = Array.from({ length: 6 }, (_, i) => `e${i}: exportContacts(accountId: $a) { id fileName }`).join(' ');
    const r = await t.gql(`mutation ($a: ID!) { ${calls} }`, { a: fresh.id }, { as: fresh.owner });
    const tickets = Object.values(r.data as Record<string, { id: string } | null>).filter((ticket) => ticket !== null);
    expect(tickets).toHaveLength(5);
    expect(r.data.e5).toBeNull();
    expect(r.errors).toHaveLength(1);
    expect(r.errors![0]).toMatchObject({ path: ['e5'], extensions: { code: 'RATE_LIMITED' } });
    const rows = await t.db.exportLog.findMany({ where: { accountId: fresh.id } });
    expect(rows.map((row) => row.id).sort()).toEqual(tickets.map((ticket) => ticket.id).sort());
  });

  it('a mutation that fails writes nothing, and the mutations after it in the document still run', async () => {
    const fresh = await createAccount(t);
    const r = await t.gql(
      `mutation ($a: ID!) {
        bad: createContact(input: { accountId: $a, firstName: "" }) { id }
        good: createContact(input: { accountId: $a, firstName: "Grace" }) { id }
      }`,
      { a: fresh.id },
      { as: fresh.owner },
    );
    expect(r.data.bad).toBeNull();
    expect(r.errors).toMatchObject([{ path: ['bad'], extensions: { code: 'BAD_USER_INPUT' } }]);
    const contacts = await t.db.contact.findMany({ where: { accountId: fresh.id }, select: { id: true, firstName: true } });
    expect(contacts).toEqual([{ id: r.data.good.id, firstName: 'Grace' }]);
  });
});

/** A POST or GET to /graphql as a client library sends it; the raw status and JSON body. */
async function send(app: TestApp, init: { body?: unknown; search?: string; as?: TestUser | null }) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (init.as !== null) headers.authorization = `Bearer ${(init.as ?? acc.owner).token}`;
  const response = await fetch(`${app.baseUrl}/graphql${init.search ?? ''}`, {
    method: init.body === undefined ? 'GET' : 'POST',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

const ME = 'query Me { me { id } }';
const apq = (query: string) => ({ persistedQuery: { version: 1, sha256Hash: sha256(query) } });

describe('automatic persisted queries (Apollo protocol, decisions §11)', () => {
  it('an unknown hash is PERSISTED_QUERY_NOT_FOUND; the client sends hash and text once; then the hash alone runs', async () => {
    const query = `query Apq { me { id } } # ${randomUUID()}`;
    const miss = await send(t, { body: { extensions: apq(query) } });
    expect(miss.status).toBe(200);
    expect(miss.body.errors).toEqual([expect.objectContaining({ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } })]);
    const register = await send(t, { body: { query, extensions: apq(query) } });
    expect(register.body.data).toEqual({ me: { id: acc.owner.id } });
    const hit = await send(t, { body: { extensions: apq(query) } });
    expect(hit.body.data).toEqual(register.body.data);
  });

  it('Apollo\'s GET for hashed queries: the hash in the query string runs a stored query', async () => {
    const query = `query ApqGet { me { id } } # ${randomUUID()}`;
    const search = (q?: string) =>
      `?extensions=${encodeURIComponent(JSON.stringify(apq(query)))}${q ? `&query=${encodeURIComponent(q)}` : ''}`;
    expect((await send(t, { search: search() })).body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect((await send(t, { search: search(query) })).body.data).toEqual({ me: { id: acc.owner.id } });
    expect((await send(t, { search: search() })).body.data).toEqual({ me: { id: acc.owner.id } });
  });

  it('a hash that is not the SHA-256 of the text is BAD_USER_INPUT, and nothing is stored under it', async () => {
    const wrong = { persistedQuery: { version: 1, sha256Hash: sha256('something else') } };
    const r = await send(t, { body: { query: ME, extensions: wrong } });
    expect(r.body.errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT', details: { 'extensions.persistedQuery.sha256Hash': ['Must be the SHA-256 of the query'] } });
    expect((await send(t, { body: { extensions: wrong } })).body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });

  it.skipIf(skipIfMissing(unsetVariables('REDIS_URL')))('with Redis, a query registered on one instance runs by hash on another', async () => {
    await requireRedis(TEST_REDIS_URL);
    const prefix = `apq-test-${randomUUID()}:`;
    const [one, two] = [redisDocumentStore(TEST_REDIS_URL, prefix), redisDocumentStore(TEST_REDIS_URL, prefix)];
    try {
      const [a, b] = [createApp({ ...t.deps, documents: one }), createApp({ ...t.deps, documents: two })];
      const query = `query Shared { me { id } } # ${randomUUID()}`;
      const call = async (app: typeof a, body: unknown) => {
        const response = await app.fetch('http://localhost/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${acc.owner.token}` },
          body: JSON.stringify(body),
        });
        return (await response.json()) as any;
      };
      expect((await call(b, { extensions: apq(query) })).errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
      const registered = await call(a, { query, extensions: apq(query) });
      expect(registered.data, JSON.stringify(registered)).toEqual({ me: { id: acc.owner.id } });
      expect((await call(b, { extensions: apq(query) })).data).toEqual({ me: { id: acc.owner.id } });
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});

describe('queries by GET', () => {
  it('a query may be sent by GET with its variables in the query string', async () => {
    const query = encodeURIComponent('query ($a: ID!) { contacts(accountId: $a) { total } }');
    const r = await send(t, { search: `?query=${query}&variables=${encodeURIComponent(JSON.stringify({ a: acc.id }))}` });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ contacts: { total: 0 } });
  });
});

describe('trusted documents (GRAPHQL_TRUSTED_DOCUMENTS)', () => {
  const LISTED = 'query Listed { me { id } }';
  let trusted: TestApp;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'trusted-'));
    await writeFile(path.join(dir, 'documents.json'), JSON.stringify({ [sha256(LISTED)]: LISTED }));
    trusted = await createTestApp({ env: { GRAPHQL_TRUSTED_DOCUMENTS: path.join(dir, 'documents.json') } });
  });
  afterAll(async () => {
    await trusted?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a listed document runs by its hash', async () => {
    const user = await createAccount(trusted);
    const r = await send(trusted, { body: { extensions: apq(LISTED) }, as: user.owner });
    expect(r.body.data).toEqual({ me: { id: user.owner.id } });
  });

  it('any other document is refused, sent as text or by an unknown hash, and nothing runs', async () => {
    const user = await createAccount(trusted);
    const create = `mutation { createContact(input: { accountId: "${user.id}", firstName: "Nope" }) { id } }`;
    for (const body of [{ query: create }, { query: create, extensions: apq(create) }, { extensions: apq(create) }]) {
      const r = await send(trusted, { body, as: user.owner });
      expect(r.body.errors?.[0]?.extensions?.code, JSON.stringify(body)).toBe('PERSISTED_QUERY_NOT_FOUND');
      expect(r.body.data ?? null).toBeNull();
    }
    expect(await trusted.db.contact.count({ where: { accountId: user.id } })).toBe(0);
  });

  it('REST still runs its own operations', async () => {
    const user = await createAccount(trusted);
    const created = await trusted.rest('POST', '/api/v1/contacts', { as: user.owner, body: { account_id: user.id, first_name: 'Rest' } });
    expect(created.status).toBe(201);
    const listed = await trusted.rest('GET', `/api/v1/contacts?account_id=${user.id}`, { as: user.owner });
    expect(listed.body.total).toBe(1);
  });

  it('a file whose hash is not its document\'s SHA-256 stops the service at start', () => {
    const file = path.join(tmpdir(), `bad-${randomUUID()}.json`);
    writeFileSync(file, JSON.stringify({ [sha256('other')]: LISTED }));
    expect(() => loadConfig({ NODE_ENV: 'test', GRAPHQL_TRUSTED_DOCUMENTS: file })).toThrow(ConfigError);
    rmSync(file);
  });
});

describe('batching (decisions §11)', () => {
  it('a JSON array of operations answers an array, in order', async () => {
    const r = await send(t, { body: [{ query: ME }, { query: 'query ($a: ID!) { contacts(accountId: $a) { total } }', variables: { a: acc.id } }, { query: '{ nope }' }] });
    expect(r.status).toBe(200);
    expect(r.body).toHaveLength(3);
    expect(r.body[0].data).toEqual({ me: { id: acc.owner.id } });
    expect(r.body[1].data).toEqual({ contacts: { total: 0 } });
    expect(r.body[2].errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it(`more than ${GRAPHQL_LIMITS.maxBatch} operations are refused whole: nothing runs`, async () => {
    const fresh = await createAccount(t);
    const op = { query: `mutation { createContact(input: { accountId: "${fresh.id}", firstName: "Batch" }) { id } }` };
    const r = await send(t, { body: Array(GRAPHQL_LIMITS.maxBatch + 1).fill(op), as: fresh.owner });
    expect(r.status).toBe(413);
    expect(r.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(await t.db.contact.count({ where: { accountId: fresh.id } })).toBe(0);
  });

  it('each operation of a batch counts against the limits: 4 batches of 10 createContact create 30', async () => {
    const fresh = await createAccount(t);
    const op = { query: `mutation { createContact(input: { accountId: "${fresh.id}", firstName: "Batch" }) { id } }` };
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(...(await send(t, { body: Array(10).fill(op), as: fresh.owner })).body);
    expect(answers.filter((a: any) => a.data?.createContact)).toHaveLength(30);
    expect(answers.filter((a: any) => a.errors?.[0]?.extensions?.code === 'RATE_LIMITED')).toHaveLength(10);
    expect(await t.db.contact.count({ where: { accountId: fresh.id } })).toBe(30);
  });

  it('each operation of a batch is charged its own cost (on a stopped clock: no points leak back meanwhile)', async () => {
    const frozen = await createTestApp({ store: new MemoryStore({ now: () => 1_000_000 }) });
    try {
      const user = (await createAccount(frozen)).owner;
      const r = await send(frozen, { body: Array(3).fill({ query: '{ me { id accounts { id } } }' }), as: user });
      // me and up to 25 accounts (User.accounts' most, docs/graphql.md#cost-and-budget): 26 each.
      expect(r.body.map((a: any) => a.extensions.cost.requested)).toEqual([26, 26, 26]);
      expect(r.body.map((a: any) => a.extensions.cost.remaining).sort()).toEqual([19_922, 19_948, 19_974]);
    } finally {
      await frozen.close();
    }
  });
});
