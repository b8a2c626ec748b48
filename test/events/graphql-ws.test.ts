// docs/graphql.md "Subscriptions": graphql-ws (Apollo's GraphQLWsLink, urql) on /graphql, with the
// authentication, access checks and fan-out of SSE.
import type { FormattedExecutionResult } from 'graphql/index.js';
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { emit } from '../../src/events/emit.js';
import { SYSTEM } from '../../src/events/types.js';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, TEST_ORIGIN, type TestApp, type TestUser } from '../helpers/app.js';
import { createContactThrough, secondInstance, WAIT, watchSubscriptions } from '../helpers/live.js';
import { skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';

const SUB = 'subscription ($a: ID!, $types: [String!]) { accountEvents(accountId: $a, types: $types) { id type accountId actor { type id } data } }';

type Auth = { connectionParams?: Record<string, unknown>; headers?: Record<string, string> };

/** A graphql-ws client of the instance at `baseUrl`; `headers` go on the upgrade request (Node only: browsers cannot). */
function wsClient(baseUrl: string, { connectionParams, headers }: Auth): Client {
  return createClient({
    url: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
    connectionParams,
    retryAttempts: 0,
    webSocketImpl: class extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols, { headers });
      }
    },
  });
}
const bearer = (user: TestUser): Auth => ({ connectionParams: { authorization: `Bearer ${user.token}` } });

/** Subscribes and collects what arrives: results, then how it ended (completed, or the error / close event). */
function subscribe(client: Client, query: string, variables: Record<string, unknown>) {
  const received: FormattedExecutionResult<any, unknown>[] = [];
  const ended = new Promise<{ completed: true } | { error: unknown }>((resolve) => {
    client.subscribe({ query, variables }, {
      next: (result) => void received.push(result),
      complete: () => resolve({ completed: true }),
      error: (error) => resolve({ error }),
    });
  });
  return { received, ended };
}

describe('graphql-ws on one instance (the embedded database, no Redis)', () => {
  let app: TestApp;
  let acc: TestAccount;
  let live: ReturnType<typeof watchSubscriptions>;
  const clients: Client[] = [];
  const client = (auth: Auth) => {
    const c = wsClient(app.baseUrl, auth);
    clients.push(c);
    return c;
  };
  beforeAll(async () => {
    app = await createTestApp({ env: { REDIS_URL: '', EVENT_POLL_MS: '50' }, worker: true });
    acc = await createAccount(app);
    live = watchSubscriptions(app);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
    await live?.close();
    await app?.close();
  });

  it('a member subscribed with the graphql-ws client receives the change as SSE would', async () => {
    const acc2 = await createAccount(app);
    const sub = subscribe(client(bearer(acc2.member)), SUB, { a: acc2.id, types: ['contact.created'] });
    await live.listening(acc2.id);
    const id = await createContactThrough(app.baseUrl, acc2.owner, acc2.id);
    await expect.poll(() => sub.received.length, WAIT).toBe(1);
    expect(sub.received[0]).toEqual({
      data: { accountEvents: expect.objectContaining({ type: 'contact.created', accountId: acc2.id, actor: { type: 'user', id: acc2.owner.id }, data: expect.objectContaining({ object: expect.objectContaining({ id }) }) }) },
    });
  });

  it('a bad token is refused: the connection closes with 4403 Forbidden', async () => {
    const sub = subscribe(client({ connectionParams: { authorization: 'Bearer not-a-token' } }), SUB, { a: acc.id });
    expect(await sub.ended).toEqual({ error: expect.objectContaining({ code: 4403 }) });
    expect(sub.received).toEqual([]);
  });

  it('no token at all is refused the same way', async () => {
    const sub = subscribe(client({}), SUB, { a: acc.id });
    expect(await sub.ended).toEqual({ error: expect.objectContaining({ code: 4403 }) });
  });

  it('a session cookie from a site not in ALLOWED_ORIGINS is refused; from an allowed origin it authenticates', async () => {
    const cookie = `session=${acc.member.token}`;
    const foreign = subscribe(client({ headers: { cookie, origin: 'https://evil.example' } }), '{ me { id } }', {});
    expect(await foreign.ended).toEqual({ error: expect.objectContaining({ code: 4403 }) });
    const allowed = subscribe(client({ headers: { cookie, origin: TEST_ORIGIN } }), '{ me { id } }', {});
    expect(await allowed.ended).toEqual({ completed: true });
    expect(allowed.received).toMatchObject([{ data: { me: { id: acc.member.id } } }]);
  });

  it("the upgrade request's Authorization header authenticates; connectionParams win over it", async () => {
    const header = subscribe(client({ headers: { authorization: `Bearer ${acc.owner.token}` } }), '{ me { id } }', {});
    await header.ended;
    expect(header.received).toMatchObject([{ data: { me: { id: acc.owner.id } } }]);
    const both = subscribe(client({ headers: { authorization: `Bearer ${acc.owner.token}` }, ...bearer(acc.member) }), '{ me { id } }', {});
    await both.ended;
    expect(both.received).toMatchObject([{ data: { me: { id: acc.member.id } } }]);
  });

  it('an outsider is FORBIDDEN at subscribe time, and the connection stays usable', async () => {
    const c = client(bearer(acc.outsider));
    const sub = subscribe(c, SUB, { a: acc.id });
    expect(await sub.ended).toEqual({ completed: true });
    expect(sub.received).toMatchObject([{ errors: [{ extensions: { code: 'FORBIDDEN' } }] }]);
    const me = subscribe(c, '{ me { id } }', {});
    await me.ended;
    expect(me.received).toMatchObject([{ data: { me: { id: acc.outsider.id } } }]);
  });

  it('a document that does not validate is an error message with its code; the connection stays usable', async () => {
    const c = client(bearer(acc.member));
    const bad = subscribe(c, 'subscription { nope }', {});
    expect(await bad.ended).toEqual({ error: [expect.objectContaining({ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } })] });
    const me = subscribe(c, '{ me { id } }', {});
    expect(await me.ended).toEqual({ completed: true });
  });

  it("a removed member's subscription ends", async () => {
    const acc3 = await createAccount(app);
    const sub = subscribe(client(bearer(acc3.member)), SUB, { a: acc3.id });
    await live.listening(acc3.id);
    // What removeTeamMember does (docs/decisions.md §12): the row goes, member.removed is emitted with it.
    await app.db.$transaction(async (tx) => {
      const member = await tx.teamMember.delete({ where: { accountId_userId: { accountId: acc3.id, userId: acc3.member.id } } });
      await emit(tx, { type: 'member.removed', accountId: acc3.id, actor: SYSTEM, object: member });
    });
    expect(await sub.ended).toEqual({ completed: true });
    expect(sub.received).toEqual([]);
  });
});

describe.skipIf(skipIfMissing(unsetVariables('REDIS_URL')))('graphql-ws across instances (PostgreSQL or PGlite, Redis)', () => {
  let a: TestApp; // serves the subscription; relays nothing itself
  let b: Awaited<ReturnType<typeof secondInstance>>;
  let live: ReturnType<typeof watchSubscriptions>;
  let ws: Client;
  beforeAll(async () => {
    a = await createTestApp({ env: { EVENT_POLL_MS: '50' }, worker: false });
    b = await secondInstance(a);
    live = watchSubscriptions(a);
  });
  afterAll(async () => {
    await ws?.dispose();
    await live?.close();
    await b?.close();
    await a?.close();
  });

  it('a graphql-ws subscriber on instance A receives a change made through instance B', async () => {
    const acc = await createAccount(a);
    ws = wsClient(a.baseUrl, bearer(acc.member));
    const sub = subscribe(ws, SUB, { a: acc.id, types: ['contact.created'] });
    await live.listening(acc.id);
    const id = await createContactThrough(b.baseUrl, acc.owner, acc.id);
    await expect.poll(() => sub.received.length, WAIT).toBe(1);
    expect(sub.received[0]!.data.accountEvents).toMatchObject({ type: 'contact.created', accountId: acc.id, data: { object: { id } } });
  });
});
