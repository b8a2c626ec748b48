/**
 * The contract's Limits table over REST, row by row (docs/decisions.md §2, §7): the limit+1-th request in
 * the window is a 429 with the contract's body and the RateLimit-* / Retry-After headers; another
 * user (or address, or account) is not affected; the order of checks holds while limited; and the
 * window slides. Runs over Redis when REDIS_URL is set (createTestApp uses it; CI must set it), else
 * in memory; the sliding-window rows run on both stores (Redis when REDIS_URL is set).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mintToken } from '../../src/auth/token.js';
import type { AtomicStore } from '../../src/ratelimit/atomic-store.js';
import { MemoryStore } from '../../src/ratelimit/memory-store.js';
import { RedisStore } from '../../src/ratelimit/redis-store.js';
import { createAccount, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, TEST_SECRET, type RestResult, type TestApp, type TestUser } from '../helpers/app.js';
import { requireRedis, skipIfMissing, TEST_REDIS_URL, unsetVariables } from '../helpers/prerequisites.js';

// Hundreds of sequential requests on a shared 2-core machine: generous, never part of correctness.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 240_000 });

type Fixture = { t: TestApp; acc: TestAccount; formId: string; otherFormId: string };
/** Who calls: a user (or nobody) from an address. */
type Caller = { as: TestUser | null; ip: string };

let ipSeq = 0;
const newIp = () => `203.0.113.${++ipSeq % 250}`;

/** One app with an account (owner, member, outsider) and two active lead forms. */
async function fixture(options: Parameters<typeof createTestApp>[0] = {}): Promise<Fixture> {
  await requireRedis(); // in CI these limits are proven on Redis, never on a silent in-memory fallback
  const t = await createTestApp(options);
  const acc = await createAccount(t);
  const form = async (): Promise<string> => {
    const fields = [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' }];
    const r = await t.gql(
      'mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }',
      { input: { accountId: acc.id, name: unique('Form'), fields } },
      { as: acc.owner },
    );
    expect(r.errors).toBeUndefined();
    return r.data.createLeadForm.id;
  };
  const [a, b] = [await form(), await form()];
  return { t, acc, formId: a, otherFormId: b };
}

/** A row of the contract's Limits table (numbers copied from the contract, not from src/). */
type Limit = { max: number; /** seconds */ window: number; per: 'user' | 'ip' | 'account' };
type Row = {
  endpoint: string;
  rule: Limit;
  /** Status of an accepted request. */
  status: number;
  /** A valid request. */
  ok(f: Fixture, c: Caller): Promise<RestResult>;
  /** A request that fails validation when not limited (400; 404 for an unknown form). */
  invalid(f: Fixture, c: Caller): Promise<RestResult>;
};

const q = (f: Fixture, path: string, extra = '') => `${path}?account_id=${f.acc.id}${extra}`;
const submit = (formId: string, body: unknown) => (f: Fixture, c: Caller) =>
  f.t.rest('POST', `/api/v1/forms/${formId}/submit`, { as: c.as, clientIp: c.ip, body });

const ROWS: Row[] = [
  {
    endpoint: 'GET /api/v1/contacts', rule: { max: 60, window: 60, per: 'user' }, status: 200,
    ok: (f, c) => f.t.rest('GET', q(f, '/api/v1/contacts'), { as: c.as, clientIp: c.ip }),
    invalid: (f, c) => f.t.rest('GET', '/api/v1/contacts?account_id=not-a-uuid', { as: c.as, clientIp: c.ip }),
  },
  {
    endpoint: 'POST /api/v1/contacts', rule: { max: 30, window: 60, per: 'user' }, status: 201,
    ok: (f, c) => f.t.rest('POST', '/api/v1/contacts', { as: c.as, clientIp: c.ip, body: { account_id: f.acc.id, first_name: 'Ada' } }),
    invalid: (f, c) => f.t.rest('POST', '/api/v1/contacts', { as: c.as, clientIp: c.ip, body: { account_id: f.acc.id } }),
  },
  {
    endpoint: 'GET /api/v1/contacts/export', rule: { max: 5, window: 60, per: 'user' }, status: 200,
    ok: (f, c) => f.t.rest('GET', q(f, '/api/v1/contacts/export'), { as: c.as, clientIp: c.ip }),
    invalid: (f, c) => f.t.rest('GET', '/api/v1/contacts/export?account_id=not-a-uuid', { as: c.as, clientIp: c.ip }),
  },
  {
    endpoint: 'GET /api/v1/deals', rule: { max: 60, window: 60, per: 'user' }, status: 200,
    ok: (f, c) => f.t.rest('GET', q(f, '/api/v1/deals'), { as: c.as, clientIp: c.ip }),
    invalid: (f, c) => f.t.rest('GET', q(f, '/api/v1/deals', '&status=pending'), { as: c.as, clientIp: c.ip }),
  },
  {
    endpoint: 'POST /api/v1/deals', rule: { max: 30, window: 60, per: 'user' }, status: 201,
    ok: (f, c) => f.t.rest('POST', '/api/v1/deals', { as: c.as, clientIp: c.ip, body: { account_id: f.acc.id, title: 'Deal' } }),
    invalid: (f, c) => f.t.rest('POST', '/api/v1/deals', { as: c.as, clientIp: c.ip, body: { account_id: f.acc.id, title: 'Deal', probability: 101 } }),
  },
  {
    endpoint: 'GET /api/v1/invoices', rule: { max: 60, window: 60, per: 'user' }, status: 200,
    ok: (f, c) => f.t.rest('GET', q(f, '/api/v1/invoices'), { as: c.as, clientIp: c.ip }),
    invalid: (f, c) => f.t.rest('GET', q(f, '/api/v1/invoices', '&page_size=0'), { as: c.as, clientIp: c.ip }),
  },
  {
    endpoint: 'POST /api/v1/forms/{form_id}/submit', rule: { max: 5, window: 60, per: 'ip' }, status: 200,
    ok: (f, c) => submit(f.formId, { data: { email: `${unique('lead')}@example.com` } })(f, c),
    invalid: (f, c) => submit(f.formId, { data: { email: 'not an e-mail' } })(f, c),
  },
  {
    endpoint: 'GET /api/v1/account/export', rule: { max: 1, window: 3600, per: 'account' }, status: 200,
    ok: (f, c) => f.t.rest('GET', q(f, '/api/v1/account/export'), { as: c.as, clientIp: c.ip }),
    invalid: (f, c) => f.t.rest('GET', '/api/v1/account/export?account_id=not-a-uuid', { as: c.as, clientIp: c.ip }),
  },
];
const row = (endpoint: string) => ROWS.find((r) => r.endpoint === endpoint)!;


function expectAccepted(r: RestResult, row: Row, remaining: number) {
  expect({ status: r.status, body: r.status === row.status ? 'ok' : r.body }).toEqual({ status: row.status, body: 'ok' });
  expect(r.headers.get('ratelimit-limit')).toBe(String(row.rule.max));
  expect(r.headers.get('ratelimit-remaining')).toBe(String(remaining));
  const reset = Number(r.headers.get('ratelimit-reset'));
  expect(reset).toBeGreaterThanOrEqual(1);
  expect(reset).toBeLessThanOrEqual(row.rule.window);
  expect(r.headers.get('retry-after')).toBeNull();
}

/** The contract's 429: body, RateLimit-* and Retry-After (= seconds until a call is let in again). */
function expectLimited(r: RestResult, rule: Limit, retryAfter?: number) {
  expect({ status: r.status, body: r.body }).toEqual({ status: 429, body: { error: 'Rate limit exceeded' } });
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  expect(r.headers.get('ratelimit-limit')).toBe(String(rule.max));
  expect(r.headers.get('ratelimit-remaining')).toBe('0');
  const reset = Number(r.headers.get('ratelimit-reset'));
  expect(reset).toBeGreaterThanOrEqual(1);
  expect(reset).toBeLessThanOrEqual(rule.window);
  expect(r.headers.get('retry-after')).toBe(String(reset));
  if (retryAfter !== undefined) expect(reset).toBe(retryAfter);
}

/** Sends the `max` accepted requests of a row's window, checking RateLimit-Remaining counts down. */
async function useUp(f: Fixture, row: Row, caller: Caller) {
  for (let i = 1; i <= row.rule.max; i++) expectAccepted(await row.ok(f, caller), row, row.rule.max - i);
}

const PER_USER = ROWS.filter((r) => r.rule.per === 'user');

describe('per-user limits', () => {
  let f: Fixture;
  beforeAll(async () => void (f = await fixture()));
  afterAll(() => f?.t.close());

  describe.each(PER_USER.map((r) => [r.endpoint, r] as const))('%s', (_, row) => {
    const ip = newIp();
    const owner = (): Caller => ({ as: f.acc.owner, ip });

    it(`the first ${row.rule.max} requests pass, with RateLimit-Remaining counting down`, async () => {
      await useUp(f, row, owner());
    });

    it(`the ${row.rule.max + 1}-th request in the window is a 429 with the contract's body and headers`, async () => {
      expectLimited(await row.ok(f, owner()), row.rule);
      expectLimited(await row.ok(f, owner()), row.rule); // and it stays refused
    });

    it('another user of the same account, from the same address, is not affected', async () => {
      expectAccepted(await row.ok(f, { as: f.acc.member, ip }), row, row.rule.max - 1);
    });

    it('the limit follows the user, not the address: the same user from elsewhere is still refused', async () => {
      expectLimited(await row.ok(f, { as: f.acc.owner, ip: newIp() }), row.rule);
    });

    it('401 comes before 429: no token, or a bad one, is a 401 while the user is limited', async () => {
      const anonymous = await row.ok(f, { as: null, ip });
      expect({ status: anonymous.status, body: anonymous.body }).toEqual({ status: 401, body: { error: 'Unauthorized' } });
      const forged = { id: f.acc.owner.id, token: await mintToken(`not-${TEST_SECRET}`, { sub: f.acc.owner.id }) };
      expect((await row.ok(f, { as: forged, ip })).status).toBe(401);
    });

    it('429 comes before 400: an invalid request is a 429 while limited (and a 400 for a user who is not)', async () => {
      expectLimited(await row.invalid(f, owner()), row.rule);
      const other = await row.invalid(f, { as: f.acc.outsider, ip });
      expect(other.status).toBe(400);
      expect(other.body.error).toMatch(/^Invalid (payload|query)$/);
    });
  });
});

describe('POST /api/v1/forms/{form_id}/submit: 5 per minute per client IP', () => {
  const row0 = row('POST /api/v1/forms/{form_id}/submit');
  let f: Fixture;
  const ip = newIp();
  beforeAll(async () => void (f = await fixture()));
  afterAll(() => f?.t.close());

  it('the first 5 submissions from an address pass, with RateLimit-Remaining counting down', async () => {
    await useUp(f, row0, { as: null, ip });
  });

  it("the 6th from that address is a 429 with the contract's body and headers", async () => {
    expectLimited(await row0.ok(f, { as: null, ip }), row0.rule);
  });

  it('another address is not affected', async () => {
    expectAccepted(await row0.ok(f, { as: null, ip: newIp() }), row0, 4);
  });

  it('the limit follows the address, not the form or a token: another form, or a signed-in caller, is refused', async () => {
    expectLimited(await submit(f.otherFormId, { data: { email: 'a@example.com' } })(f, { as: null, ip }), row0.rule);
    expectLimited(await row0.ok(f, { as: f.acc.owner, ip }), row0.rule);
  });

  it('an address behind a forged X-Forwarded-For entry is still the one the trusted proxy saw (TRUST_PROXY=1)', async () => {
    for (let i = 0; i < 3; i++) expectLimited(await row0.ok(f, { as: null, ip: `${randomUUID()}, 198.18.${i}.1, ${ip}` }), row0.rule);
  });

  it('an IPv6 address counts by its /64: six addresses of one /64, however spelt, are limited as one; the next /64 is not', async () => {
    const net = `2001:db8:${(++ipSeq).toString(16)}`; // a /64 of this run: 2001:db8:<n>:0::/64
    const six = [`${net}::1`, `${net}:0::2`, `${net.toUpperCase()}:0:0:0:0:3`, `${net}::abcd:4`, `${net}:0:1:2:3:4`, `${net}:0:ffff:ffff:ffff:ffff`];
    for (let i = 0; i < 5; i++) expectAccepted(await row0.ok(f, { as: null, ip: six[i]! }), row0, 4 - i);
    expectLimited(await row0.ok(f, { as: null, ip: six[5]! }), row0.rule);
    expectAccepted(await row0.ok(f, { as: null, ip: `${net}:1::1` }), row0, 4);
  });

  it('429 comes before 404 and 400: an unknown form or an invalid payload is a 429 while limited', async () => {
    expectLimited(await submit(randomUUID(), { data: {} })(f, { as: null, ip }), row0.rule);
    expectLimited(await row0.invalid(f, { as: null, ip }), row0.rule);
    const fresh = newIp();
    expect((await submit(randomUUID(), { data: {} })(f, { as: null, ip: fresh })).status).toBe(404);
    expect((await row0.invalid(f, { as: null, ip: fresh })).status).toBe(400);
  });
});

describe('TRUST_PROXY=2 and fewer X-Forwarded-For entries than trusted proxies', () => {
  const row0 = row('POST /api/v1/forms/{form_id}/submit');
  let f: Fixture;
  beforeAll(async () => void (f = await fixture({ env: { TRUST_PROXY: '2' } })));
  afterAll(() => f?.t.close());

  it("the socket address counts, not the client's own left-most entry: the 6th submit from one socket is a 429", async () => {
    // One entry each, written by the client itself (no second proxy appended to it): only the socket (127.0.0.1) may count.
    for (let i = 0; i < 5; i++) expectAccepted(await row0.ok(f, { as: null, ip: newIp() }), row0, 4 - i);
    expectLimited(await row0.ok(f, { as: null, ip: newIp() }), row0.rule);
  });
});

describe('GET /api/v1/account/export: 1 per hour per account', () => {
  const row0 = row('GET /api/v1/account/export');
  const ip = newIp();
  let f: Fixture;
  let secondAccountId: string;
  beforeAll(async () => {
    f = await fixture();
    // The same owner owns a second account: the budget is per account, not per user.
    secondAccountId = (await f.t.db.account.create({ data: { name: unique('Second'), ownerId: f.acc.owner.id } })).id;
  });
  afterAll(() => f?.t.close());
  const exportOf = (accountId: string, as: TestUser | null) =>
    f.t.rest('GET', `/api/v1/account/export?account_id=${accountId}`, { as, clientIp: ip });

  it("a member's and an outsider's refused attempts (403) do not use the owner's hourly budget", async () => {
    for (let i = 0; i < 3; i++) {
      const member = await exportOf(f.acc.id, f.acc.member);
      expect({ status: member.status, body: member.body }).toEqual({
        status: 403,
        body: { error: 'Forbidden: only the account owner can export account data' },
      });
      expect(member.headers.get('ratelimit-remaining')).toBeNull();
      const outsider = await exportOf(f.acc.id, f.acc.outsider);
      expect({ status: outsider.status, body: outsider.body }).toEqual({ status: 403, body: { error: 'Forbidden: no access to this account' } });
    }
    const first = await exportOf(f.acc.id, f.acc.owner);
    expectAccepted(first, row0, 0);
    expect(Number(first.headers.get('ratelimit-reset'))).toBe(3600);
  });

  it("the owner's second export within the hour is a 429 with the contract's body and headers", async () => {
    const refused = await exportOf(f.acc.id, f.acc.owner);
    expectLimited(refused, row0.rule);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3500);
  });

  it('another account is not affected, even with the same owner', async () => {
    expectAccepted(await exportOf(secondAccountId, f.acc.owner), row0, 0);
    expectLimited(await exportOf(secondAccountId, f.acc.owner), row0.rule);
  });

  it('while the account is limited the order is 401 -> 400 -> 403 -> 429 (docs/decisions.md §2)', async () => {
    expect((await exportOf(f.acc.id, null)).status).toBe(401);
    const invalid = await row0.invalid(f, { as: f.acc.owner, ip });
    expect({ status: invalid.status, error: invalid.body.error }).toEqual({ status: 400, error: 'Invalid query' });
    expect((await exportOf(f.acc.id, f.acc.member)).status).toBe(403);
    expect((await exportOf(f.acc.id, f.acc.outsider)).status).toBe(403);
    expectLimited(await exportOf(f.acc.id, f.acc.owner), row0.rule);
  });
});

/**
 * Sliding windows at the HTTP level with the real rules, on each store with a clock the test moves
 * (the Redis store takes it in place of Redis TIME; its own key prefix keeps its buckets apart).
 */
const SLIDING_STORES: [string, (now: () => number) => Promise<AtomicStore>][] = [
  ['memory', async (now) => new MemoryStore({ now })],
  [
    'Redis',
    async (now) => {
      await requireRedis(TEST_REDIS_URL);
      const log = (msg: string, err?: unknown) => console.error(`unexpected rate-limit log: ${msg}`, err ?? '');
      return new RedisStore({ url: TEST_REDIS_URL, log, prefix: `rl-slide-${randomUUID()}:`, now });
    },
  ],
];

const SKIP_REDIS = skipIfMissing(unsetVariables('REDIS_URL'));
for (const [name, makeStore] of SLIDING_STORES) describe.skipIf(name === 'Redis' && SKIP_REDIS)(`the window slides (controlled clock, ${name} store)`, () => {
  let clock = Date.now();
  let f: Fixture;
  beforeAll(async () => void (f = await fixture({ store: await makeStore(() => clock) })));
  afterAll(() => f?.t.close());

  const tick = (ms: number) => void (clock += ms);

  it.each(ROWS.map((r) => [r.endpoint, r] as const))(
    '%s: once the oldest call leaves the window exactly one more passes, not a whole new window',
    async (_, row) => {
      const caller: Caller = { as: f.acc.owner, ip: newIp() };
      const { max } = row.rule;
      const windowMs = row.rule.window * 1000;
      const half = windowMs / 2;
      const t0 = clock;
      // One call at t0, the other max-1 half a window later, then one too many.
      expectAccepted(await row.ok(f, caller), row, max - 1);
      tick(half);
      for (let i = 2; i <= max; i++) expectAccepted(await row.ok(f, caller), row, max - i);
      // Retry-After says when the oldest call (at t0) leaves: half a window from now.
      expectLimited(await row.ok(f, caller), row.rule, half / 1000);

      clock = t0 + windowMs - 1; // a millisecond before the oldest leaves: still refused
      expectLimited(await row.ok(f, caller), row.rule, 1);

      clock = t0 + windowMs; // the oldest has left: one call fits, and only one
      expectAccepted(await row.ok(f, caller), row, 0);
      // The calls made at t0+half still count until t0+half+window (a fixed window would have reset).
      expectLimited(await row.ok(f, caller), row.rule, max > 1 ? half / 1000 : windowMs / 1000);

      clock = t0 + half + windowMs; // they have left too: max-1 pass (the one at t0+window still counts)
      for (let i = 1; i < max; i++) expect((await row.ok(f, caller)).status).toBe(row.status);
      expectLimited(await row.ok(f, caller), row.rule);
      clock += 2 * windowMs; // leave every later row a clean slate
    },
  );
});
