import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { createPubSub } from 'graphql-yoga';
import { Redis } from 'ioredis';
import { closeRedis } from '../redis.js';
import type { EventBus } from '../deps.js';

const TOPIC = 'accountEvents:';

/** What the relay needs of the bus: where to publish, and the accounts someone listens to now, on any instance. */
export type LiveBus = { bus: Pick<EventBus, 'publish'>; listened(): Promise<readonly string[]> };

/** Yoga's in-memory event target, counting each topic's listeners (one per subscription). */
class CountingTarget extends EventTarget {
  readonly listeners = new Map<string, number>();
  override addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: AddEventListenerOptions | boolean) {
    this.listeners.set(type, (this.listeners.get(type) ?? 0) + 1);
    super.addEventListener(type, listener, options);
  }
  override removeEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: EventListenerOptions | boolean) {
    const left = (this.listeners.get(type) ?? 1) - 1;
    if (left > 0) this.listeners.set(type, left);
    else this.listeners.delete(type);
    super.removeEventListener(type, listener, options);
  }
}

const accountsOf = (topics: Iterable<string>) => [...topics].flatMap((t) => (t.startsWith(TOPIC) ? [t.slice(TOPIC.length)] : []));

/**
 * Live events for subscriptions: Yoga's pub/sub over Redis when REDIS_URL is set, so a change
 * relayed by any instance reaches subscribers on every instance; in memory with one instance.
 */
export function createEventBus(redisUrl?: string): LiveBus & { bus: EventBus; close(): Promise<void> } {
  if (!redisUrl) {
    const eventTarget = new CountingTarget();
    return { bus: createPubSub({ eventTarget }), listened: async () => accountsOf(eventTarget.listeners.keys()), close: async () => {} };
  }
  // A command timeout: the relay waits for `listened` before it takes events off the queue, and a
  // hung Redis must not stop it (nor the webhook deliveries that follow it in the worker's step).
  const publishClient = new Redis(redisUrl, { lazyConnect: false, maxRetriesPerRequest: 1, commandTimeout: 1_000 });
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
    // Every instance subscribes to an account's channel while one of its clients listens to it.
    // Redis down: nobody can be reached, so nothing is published (as before, into the void).
    listened: () => publishClient.pubsub('CHANNELS', `${TOPIC}*`).then((channels) => accountsOf(channels as string[]), () => []),
    close: async () => {
      await Promise.all([closeRedis(publishClient), closeRedis(subscribeClient)]);
    },
  };
}
