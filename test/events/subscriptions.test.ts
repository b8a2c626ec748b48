// docs/events.md "Live events": accountEvents over Server-Sent Events, fanned out through Redis.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from 'graphql-sse';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { emit } from '../../src/events/emit.js';
import { openEvents } from '../../src/events-runtime.js';
import type { Events } from '../../src/deps.js';
import { SYSTEM } from '../../src/events/types.js';
import { createAccount, createApiKey, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { requireRedis, skipIfMissing, TEST_REDIS_URL, unsetVariables } from '../helpers/prerequisites.js';

let a: TestApp; // instance A: serves subscriptions, relays nothing itself
let bEvents: Events;
let bServer: Server;
let bUrl: string;
let acc: TestAccount;
let redis: Redis;

beforeAll(async () => {
  await requireRedis(TEST_REDIS_URL);
  a = await createTestApp({ env: { REDIS_URL: TEST_REDIS_URL, EVENT_POLL_MS: '50' }, worker: false });
  // Instance B: the same database and Redis, its own bus and worker.
  bEvents = await openEvents(a.deps.config, a.deps.db.prisma, a.deps.log, { worker: true });
  bServer = createServer(createApp({ ...a.deps, events: bEvents }));
  await new Promise<void>((resolve) => bServer.listen(0, '127.0.0.1', resolve));
  bUrl = `http://127.0.0.1:${(bServer.address() as AddressInfo).port}`;
  acc = await createAccount(a);
  redis = new Redis(TEST_REDIS_URL);
});
afterAll(async () => {
  await redis?.quit();
  await new Promise((resolve) => bServer?.close(resolve));
  await bEvents?.close();
  await a?.close();
});

type Sse = { events: { event: string; data: any }[]; waitFor(n: number): Promise<void>; done: Promise<void>; close(): void };

/** Subscribes over SSE (POST /graphql, Accept: text/event-stream) and collects what arrives. */
async function subscribe(baseUrl: string, as: TestUser, query: string, variables: object): Promise<Sse> {
  const abort = new AbortController();
  const response = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${as.token}`, 'x-forwarded-for': '198.51.100.7' },
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  });
  expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
  const events: Sse['events'] = [];
  const waiters: (() => void)[] = [];
  const done = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event) events.push({ event, data: data ? JSON.parse(data) : null });
          waiters.splice(0).forEach((w) => w());
        }
      }
    } catch {
      /* aborted */
    }
  })();
  return {
    events,
    done,
    close: () => abort.abort(),
    waitFor: async (n) => {
      while (events.filter((e) => e.event === 'next').length < n) await new Promise<void>((r) => waiters.push(r));
    },
  };
}

const SUB = 'subscription ($a: ID!, $types: [String!]) { accountEvents(accountId: $a, types: $types) { id type accountId actor { type id } data } }';
/**
 * Resolves once an instance listens on Redis for the account's live events (Yoga's topic
 * `accountEvents:<id>`). Each test subscribes to an account of its own, so no earlier subscription
 * still being torn down answers for it.
 */
async function registered(accountId: string) {
  const count = async () => Number(((await redis.pubsub('NUMSUB', `accountEvents:${accountId}`)) as [string, number])[1]);
  while ((await count()) === 0) await new Promise((r) => setImmediate(r));
}

const createContact = (into: TestAccount, firstName: string) =>
  fetch(`${bUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${into.owner.token}` },
    body: JSON.stringify({ query: 'mutation ($i: CreateContactInput!) { createContact(input: $i) { id } }', variables: { i: { accountId: into.id, firstName } } }),
  }).then(async (r) => ((await r.json()) as { data: { createContact: { id: string } } }).data.createContact.id);

// Every case needs Redis; with them all skipped, Vitest runs none of the file's hooks either.
describe.skipIf(skipIfMissing(unsetVariables('REDIS_URL')))('Subscription.accountEvents', () => {
  // How soon it arrives (commit to subscriber) is measured in BENCHMARKS.md "Live events", not timed here.
  it('a client subscribed on instance A sees a change made through instance B', async () => {
    const own = await createAccount(a);
    const sse = await subscribe(a.baseUrl, own.member, SUB, { a: own.id, types: ['contact.created'] });
    await registered(own.id);
    const id = await createContact(own, unique('Live'));
    await sse.waitFor(1);
    expect(sse.events[0]!.data.data.accountEvents).toMatchObject({ type: 'contact.created', accountId: own.id, actor: { type: 'user', id: own.owner.id }, data: { object: { id } } });
    sse.close();
  });

  it("graphql-sse's client (distinct connections mode, as integrators use it) receives the change", async () => {
    const own = await createAccount(a);
    const client = createClient({ url: `${a.baseUrl}/graphql`, headers: { authorization: `Bearer ${own.member.token}` }, retryAttempts: 0 });
    const events = client.iterate<{ accountEvents: { type: string; data: { object: { id: string } } } }>({ query: SUB, variables: { a: own.id, types: ['contact.created'] } });
    const first = events.next();
    await registered(own.id);
    const id = await createContact(own, unique('Sse'));
    const { value } = await first;
    expect(value).toMatchObject({ data: { accountEvents: { type: 'contact.created', data: { object: { id } } } } });
    await events.return?.();
    client.dispose();
  });

  it('an outsider cannot subscribe; anonymous is UNAUTHENTICATED', async () => {
    const response = await fetch(`${a.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${acc.outsider.token}` },
      body: JSON.stringify({ query: SUB, variables: { a: acc.id } }),
    });
    const text = await response.text();
    expect(text).toContain('FORBIDDEN');
    expect(text).not.toContain('contact.created');
  });

  it("a removed member's subscription ends", async () => {
    const sse = await subscribe(a.baseUrl, acc.member, SUB, { a: acc.id });
    await registered(acc.id);
    // What removeTeamMember does (docs/decisions.md §12): the row goes, member.removed is emitted with it.
    await a.db.$transaction(async (tx) => {
      const member = await tx.teamMember.delete({ where: { accountId_userId: { accountId: acc.id, userId: acc.member.id } } });
      await emit(tx, { type: 'member.removed', accountId: acc.id, actor: SYSTEM, object: member });
    });
    await sse.done;
    expect(sse.events.map((e) => e.event)).toEqual(['complete']);
  });

  it("a revoked key's subscription ends at its revocation: nothing written after it arrives", async () => {
    const own = await createAccount(a);
    const key = await createApiKey(a, own, ['EVENTS_READ', 'CONTACTS_READ']);
    const sse = await subscribe(a.baseUrl, key, SUB, { a: own.id });
    await registered(own.id);
    const before = await createContact(own, unique('Before'));
    await sse.waitFor(1);
    await a.gql('mutation ($id: ID!) { revokeApiKey(id: $id) { id } }', { id: key.id }, { as: own.owner });
    await createContact(own, unique('After'));
    await sse.done;
    expect(sse.events.filter((e) => e.event === 'next').map((e) => e.data.data.accountEvents.data.object.id)).toEqual([before]);
    expect(sse.events.at(-1)!.event).toBe('complete');
  });

  it('a key hears only the kinds of events its scopes read; a member not those of API keys and webhooks', async () => {
    const own = await createAccount(a);
    const key = await createApiKey(a, own, ['EVENTS_READ', 'CONTACTS_READ']);
    const byKey = await subscribe(a.baseUrl, key, SUB, { a: own.id });
    const byMember = await subscribe(a.baseUrl, own.member, SUB, { a: own.id });
    await registered(own.id);
    await createApiKey(a, own, ['DEALS_READ']); // api_key.created: for the owner only
    await a.gql('mutation ($i: CreateDealInput!) { createDeal(input: $i) { id } }', { i: { accountId: own.id, title: 'Heard by members' } }, { as: own.owner });
    const id = await createContact(own, unique('Heard'));
    await byKey.waitFor(1);
    await byMember.waitFor(2);
    expect(byKey.events.filter((e) => e.event === 'next').map((e) => e.data.data.accountEvents.type)).toEqual(['contact.created']);
    expect(byKey.events.find((e) => e.event === 'next')!.data.data.accountEvents.data.object.id).toBe(id);
    expect(byMember.events.filter((e) => e.event === 'next').map((e) => e.data.data.accountEvents.type)).toEqual(['deal.created', 'contact.created']);
    byKey.close();
    byMember.close();
  });
});
