import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { createPubSub } from 'graphql-yoga';
import { Redis } from 'ioredis';
import type { Envelope } from './envelope.js';

export type EventBus = ReturnType<typeof createPubSub<{ accountEvents: [accountId: string, event: Envelope] }>>;

/**
 * Live events for subscriptions: Yoga's pub/sub over Redis when REDIS_URL is set, so a change
 * relayed by any instance reaches subscribers on every instance; in memory with one instance.
 */
export function createEventBus(redisUrl?: string): { bus: EventBus; close(): Promise<void> } {
  if (!redisUrl) return { bus: createPubSub(), close: async () => {} };
  const publishClient = new Redis(redisUrl, { lazyConnect: false, maxRetriesPerRequest: 1 });
  const subscribeClient = new Redis(redisUrl, { lazyConnect: false });
  // A lost Redis is logged by the relay's failed publish; the clients reconnect on their own.
  for (const client of [publishClient, subscribeClient]) client.on('error', () => undefined);
  // The event target calls publish/subscribe/unsubscribe without awaiting them: with Redis down their
  // rejections would go unhandled and end the process. A lost live event is what Redis down means;
  // the outbox row stays (Account.events, webhooks).
  const quiet = <T>(call: Promise<T>) => void call.catch(() => undefined);
  const publisher = { publish: (channel: string, message: string) => quiet(publishClient.publish(channel, message)) };
  const subscriber = {
    on: (event: 'message', listener: (channel: string, message: string) => void) => subscribeClient.on(event, listener),
    subscribe: (channel: string) => quiet(subscribeClient.subscribe(channel)),
    unsubscribe: (channel: string) => quiet(subscribeClient.unsubscribe(channel)),
  };
  const eventTarget = createRedisEventTarget({ publishClient: publisher as never, subscribeClient: subscriber as never });
  return {
    bus: createPubSub({ eventTarget }),
    close: async () => {
      await Promise.allSettled([publishClient.quit(), subscribeClient.quit()]);
    },
  };
}
