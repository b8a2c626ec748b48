/**
 * Live events in tests (docs/events.md "Live subscriptions"): a second instance on the same database
 * and Redis, a change made through an instance, and a wait until a subscription really listens.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { expect } from 'vitest';
import { createApp } from '../../src/app.js';
import { openEvents } from '../../src/events-runtime.js';
import { serveGraphqlWs } from '../../src/websocket.js';
import { unique } from '../factories/index.js';
import type { TestApp, TestUser } from './app.js';

/** How long a condition may take on a loaded machine (a first connection, the embedded database). */
export const WAIT = { timeout: 10_000 } as const;

/** Instance B: the same database and Redis as `a`, its own bus, worker (relay) and HTTP server. */
export async function secondInstance(a: TestApp): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const events = await openEvents(a.deps.config, a.deps.db.prisma, a.deps.log, { worker: true });
  const app = createApp({ ...a.deps, events });
  const server = createServer(app);
  const websockets = serveGraphqlWs(server, app, a.deps);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      await websockets.close();
      await new Promise((resolve) => server.close(resolve));
      await events.close();
    },
  };
}

/** Creates a contact through the instance at `baseUrl` (POST /graphql); its id. */
export async function createContactThrough(baseUrl: string, as: TestUser, accountId: string): Promise<string> {
  const response = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${as.token}` },
    body: JSON.stringify({ query: 'mutation ($i: CreateContactInput!) { createContact(input: $i) { id } }', variables: { i: { accountId, firstName: unique('Live') } } }),
  });
  const { data } = (await response.json()) as { data: { createContact: { id: string } } };
  return data.createContact.id;
}

/**
 * Counts the subscriptions an instance starts per account, so a test makes its change only once the
 * subscriber listens: an event published before that is not for it. With Redis, listening also means
 * Redis has the instance subscribed to the account's channel (@graphql-yoga/redis-event-target).
 */
export function watchSubscriptions(app: TestApp) {
  const started = new Map<string, number>();
  const bus = app.deps.events.bus;
  const subscribe = bus.subscribe.bind(bus);
  bus.subscribe = ((topic: 'accountEvents', accountId: string) => {
    started.set(accountId, (started.get(accountId) ?? 0) + 1);
    return subscribe(topic, accountId);
  }) as typeof bus.subscribe;
  const redis = app.deps.config.redisUrl ? new Redis(app.deps.config.redisUrl) : null;
  return {
    async listening(accountId: string, count = 1): Promise<void> {
      await expect.poll(() => started.get(accountId) ?? 0, WAIT).toBeGreaterThanOrEqual(count);
      if (redis) await expect.poll(async () => (await redis.pubsub('NUMSUB', `accountEvents:${accountId}`))[1], WAIT).toBe(1);
    },
    close: async () => void (await redis?.quit()),
  };
}
