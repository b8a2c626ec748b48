// docs/graphql.md "Subscriptions": Apollo Client's HttpLink subscribes over multipart HTTP
// (`Accept: multipart/mixed;subscriptionSpec=1.0`) on POST /graphql, beside SSE.
import { ApolloClient, gql, HttpLink, InMemoryCache } from '@apollo/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../factories/index.js';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { createContactThrough, secondInstance, WAIT, watchSubscriptions } from '../helpers/live.js';
import { skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';

const SUB = gql`subscription ($a: ID!, $types: [String!]) { accountEvents(accountId: $a, types: $types) { id type accountId data } }`;

/** Subscribes with Apollo Client's own HttpLink, as an app does with no WebSocket link. */
function apolloSubscribe(baseUrl: string, as: TestUser, variables: Record<string, unknown>) {
  const client = new ApolloClient({ link: new HttpLink({ uri: `${baseUrl}/graphql`, headers: { authorization: `Bearer ${as.token}` } }), cache: new InMemoryCache() });
  const received: { data?: any; error?: unknown }[] = [];
  const subscription = client.subscribe({ query: SUB, variables }).subscribe({
    next: (result) => void received.push(result),
    error: (error) => void received.push({ error }),
  });
  return { received, close: () => subscription.unsubscribe() };
}

describe('multipart subscriptions on one instance (the embedded database, no Redis)', () => {
  let app: TestApp;
  let live: ReturnType<typeof watchSubscriptions>;
  beforeAll(async () => {
    app = await createTestApp({ env: { REDIS_URL: '', EVENT_POLL_MS: '50' }, worker: true });
    live = watchSubscriptions(app);
  });
  afterAll(async () => {
    await live?.close();
    await app?.close();
  });

  it("Apollo Client's HttpLink receives a change as an event (no 406)", async () => {
    const acc = await createAccount(app);
    const sub = apolloSubscribe(app.baseUrl, acc.member, { a: acc.id, types: ['contact.created'] });
    await live.listening(acc.id);
    const id = await createContactThrough(app.baseUrl, acc.owner, acc.id);
    await expect.poll(() => sub.received.length, WAIT).toBe(1);
    expect(sub.received[0]).toMatchObject({ data: { accountEvents: { type: 'contact.created', accountId: acc.id, data: { object: { id } } } } });
    sub.close();
  });

  it('the answer is the multipart subscription protocol; text/event-stream still gets SSE', async () => {
    const acc = await createAccount(app);
    const ask = (accept: string) =>
      fetch(`${app.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, authorization: `Bearer ${acc.member.token}` },
        body: JSON.stringify({ query: 'subscription ($a: ID!) { accountEvents(accountId: $a) { id } }', variables: { a: acc.id } }),
      });
    const multipart = await ask('multipart/mixed;boundary=graphql;subscriptionSpec=1.0,application/json;q=0.9');
    expect(multipart.status).toBe(200);
    expect(multipart.headers.get('content-type')).toBe('multipart/mixed;boundary="graphql";subscriptionSpec="1.0"');
    await multipart.body!.cancel();
    const sse = await ask('text/event-stream');
    expect(sse.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await sse.body!.cancel();
  });

  it('an outsider is FORBIDDEN, answered as JSON before any stream', async () => {
    const acc = await createAccount(app);
    const sub = apolloSubscribe(app.baseUrl, acc.outsider, { a: acc.id });
    await expect.poll(() => sub.received.length, WAIT).toBe(1);
    expect(JSON.stringify(sub.received[0])).toContain('FORBIDDEN');
    sub.close();
  });
});

describe.skipIf(skipIfMissing(unsetVariables('REDIS_URL')))('multipart subscriptions across instances (Redis)', () => {
  let a: TestApp;
  let b: Awaited<ReturnType<typeof secondInstance>>;
  let live: ReturnType<typeof watchSubscriptions>;
  beforeAll(async () => {
    a = await createTestApp({ env: { EVENT_POLL_MS: '50' }, worker: false });
    b = await secondInstance(a);
    live = watchSubscriptions(a);
  });
  afterAll(async () => {
    await live?.close();
    await b?.close();
    await a?.close();
  });

  it("an Apollo HttpLink subscriber on instance A receives a change made through instance B", async () => {
    const acc = await createAccount(a);
    const sub = apolloSubscribe(a.baseUrl, acc.member, { a: acc.id, types: ['contact.created'] });
    await live.listening(acc.id);
    const id = await createContactThrough(b.baseUrl, acc.owner, acc.id);
    await expect.poll(() => sub.received.length, WAIT).toBe(1);
    expect(sub.received[0]).toMatchObject({ data: { accountEvents: { type: 'contact.created', accountId: acc.id, data: { object: { id } } } } });
    sub.close();
  });
});
