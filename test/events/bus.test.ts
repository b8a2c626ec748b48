// docs/events.md "How delivery works": the relay reads only the events of accounts someone listens to,
// so the bus must know them: in memory, this instance's subscriptions; with Redis, every instance's.
import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createEventBus } from '../../src/events/bus.js';
import { WAIT } from '../helpers/live.js';
import { skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';

async function listenedWhileSubscribed(redisUrl?: string) {
  const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
  const live = createEventBus(redisUrl);
  try {
    const subscription = live.bus.subscribe('accountEvents', a)[Symbol.asyncIterator]();
    const twice = live.bus.subscribe('accountEvents', a)[Symbol.asyncIterator]();
    // A subscription listens once its iterator is first asked for an event.
    const pending = [subscription.next(), twice.next()];
    await expect.poll(() => live.listened(), WAIT).toContain(a);
    expect(await live.listened()).not.toContain(b);
    await subscription.return?.();
    expect(await live.listened(), 'one subscription of the two still listens').toContain(a);
    await twice.return?.();
    await expect.poll(() => live.listened(), WAIT).not.toContain(a);
    await Promise.allSettled(pending);
  } finally {
    await live.close();
  }
}

describe('the bus knows which accounts are listened to', () => {
  it('in memory: an account while a subscription to it is open, not after', () => listenedWhileSubscribed());

  it.skipIf(skipIfMissing(unsetVariables('REDIS_URL')))('over Redis: an account while any instance subscribes to it, not after', () =>
    listenedWhileSubscribed(process.env.REDIS_URL));

  it('Redis hangs (it accepts connections and answers nothing): nobody is listened to, so the relay goes on', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => void sockets.add(socket.on('error', () => undefined))).listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const live = createEventBus(`redis://127.0.0.1:${(silent.address() as { port: number }).port}`);
    try {
      await expect(live.listened()).resolves.toEqual([]);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
      await live.close();
    }
  });
});
