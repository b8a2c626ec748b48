// docs/graphql.md "Subscriptions": graphql-sse's client in both its modes on /graphql, with the
// authentication, access checks and limits of any other request (src/plugins/use-sse-single-connection.ts).
import { createClient, TOKEN_HEADER_KEY, type Client } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createApiKey, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { createContactThrough, WAIT, watchSubscriptions } from '../helpers/live.js';

const SUB = 'subscription ($a: ID!, $types: [String!]) { accountEvents(accountId: $a, types: $types) { type data } }';

type Event = { accountEvents: { type: string; data: { object: { id: string } } } };

/** Subscribes and collects what arrives: results, then how it ended (completed, or the error). */
function subscribe(client: Client, query: string, variables: Record<string, unknown>) {
  const received: { data?: any; errors?: readonly any[] }[] = [];
  const ended = new Promise<{ completed: true } | { error: unknown }>((resolve) => {
    client.subscribe({ query, variables }, {
      next: (result) => void received.push(result),
      complete: () => resolve({ completed: true }),
      error: (error) => resolve({ error }),
    });
  });
  return { received, ended };
}

describe("graphql-sse's client on /graphql (one instance, no Redis)", () => {
  let app: TestApp;
  let live: ReturnType<typeof watchSubscriptions>;
  const clients: Client[] = [];
  const client = (as: TestUser | null, singleConnection: boolean) => {
    const c = createClient({
      url: `${app.baseUrl}/graphql`,
      singleConnection,
      headers: as ? { authorization: `Bearer ${as.token}` } : {},
      retryAttempts: 0,
    });
    clients.push(c);
    return c;
  };
  beforeAll(async () => {
    app = await createTestApp({ env: { REDIS_URL: '', EVENT_POLL_MS: '50' }, worker: true });
    live = watchSubscriptions(app);
  });
  afterAll(async () => {
    clients.forEach((c) => c.dispose());
    await live?.close();
    await app?.close();
  });

  /** An account whose key (events and contacts read) subscribes; the owner then creates a contact. */
  async function receivesAsKey(singleConnection: boolean) {
    const acc: TestAccount = await createAccount(app);
    const key = await createApiKey(app, acc, ['EVENTS_READ', 'CONTACTS_READ']);
    const sub = subscribe(client(key, singleConnection), SUB, { a: acc.id, types: ['contact.created'] });
    await live.listening(acc.id);
    const id = await createContactThrough(app.baseUrl, acc.owner, acc.id);
    await expect.poll(() => sub.received.length, WAIT).toBe(1);
    expect(sub.received[0]).toEqual({ data: { accountEvents: { type: 'contact.created', data: expect.objectContaining({ object: expect.objectContaining({ id }) }) } } });
  }

  it('distinct connections mode: an API key subscribed receives the change', () => receivesAsKey(false));

  it('single connection mode: an API key subscribed receives the change', () => receivesAsKey(true));

  it('single connection mode: queries and a subscription share the one stream', async () => {
    const acc = await createAccount(app);
    const c = client(acc.member, true);
    const sub = subscribe(c, SUB, { a: acc.id, types: ['contact.created'] });
    await live.listening(acc.id);
    const me = subscribe(c, '{ me { id } }', {});
    expect(await me.ended).toEqual({ completed: true });
    expect(me.received).toEqual([{ data: { me: { id: acc.member.id } }, extensions: expect.objectContaining({ cost: expect.any(Object) }) }]);
    await createContactThrough(app.baseUrl, acc.owner, acc.id);
    await expect.poll(() => sub.received.length, WAIT).toBe(1);
  });

  it('single connection mode: an outsider is FORBIDDEN as on any request; no token cannot reserve a stream', async () => {
    const acc = await createAccount(app);
    const refused = subscribe(client(acc.outsider, true), SUB, { a: acc.id });
    expect(await refused.ended).toEqual({ completed: true });
    expect(refused.received[0]!.errors![0]).toMatchObject({ extensions: { code: 'FORBIDDEN' } });
    const reserve = await fetch(`${app.baseUrl}/graphql`, { method: 'PUT' });
    expect(reserve.status).toBe(401);
    expect(await reserve.json()).toEqual({ errors: [{ message: 'Unauthorized', extensions: { code: 'UNAUTHENTICATED' } }] });
  });

  it('single connection mode: a stream token is random, never one a client made up twice', async () => {
    const acc = await createAccount(app);
    const reserve = () => fetch(`${app.baseUrl}/graphql`, { method: 'PUT', headers: { authorization: `Bearer ${acc.member.token}` } }).then((r) => r.text());
    const [one, two] = [await reserve(), await reserve()];
    expect(one).toMatch(/^[0-9a-f-]{36}$/);
    expect(one).not.toBe(two);
    const taken = await fetch(`${app.baseUrl}/graphql`, { method: 'PUT', headers: { authorization: `Bearer ${acc.member.token}`, [TOKEN_HEADER_KEY]: one } });
    expect(taken.status).toBe(409);
  });
});
