/**
 * From an event's commit to the live bus (what an SSE or WebSocket subscriber waits for), with the
 * worker woken by LISTEN/NOTIFY against the former 250 ms poll alone, in one run:
 *   DATABASE_URL=postgresql://... node --import tsx scripts/bench/event-latency.ts [events per mode]
 * Without DATABASE_URL it measures the embedded database. Results: BENCHMARKS.md "Live events".
 */
import { randomUUID } from 'node:crypto';
import { emit } from '../../src/events/emit.js';
import { openEvents } from '../../src/events-runtime.js';
import { SYSTEM } from '../../src/events/types.js';
import { createLogger } from '../../src/logger.js';
import { openScratch } from './scratch.js';

const count = Number(process.argv[2] ?? 100);
const { config, db, accountId, close } = await openScratch('latency', { REDIS_URL: '' });
const log = createLogger({ level: 'silent' });

async function measure(mode: 'notify' | 'poll 250 ms'): Promise<number[]> {
  const events = await openEvents({ ...config, events: { ...config.events, pollMs: mode === 'notify' ? 2_000 : 250 } }, db.prisma, log, {
    worker: true,
    listen: mode === 'notify' ? db.listen : undefined,
  });
  const live = events.bus.subscribe('accountEvents', accountId)[Symbol.asyncIterator]();
  // Asked for before the first commit: the subscription listens from then on, and the relay
  // publishes only to accounts someone listens to. The bus carries each envelope as JSON text.
  let next = live.next();
  const idOf = async (arrival: typeof next) => (JSON.parse((await arrival).value as string) as { data: { object: { id: string } } }).data.object.id;
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const id = randomUUID();
    await db.prisma.$transaction((tx) => emit(tx, { type: 'contact.created', accountId, actor: SYSTEM, object: { id, accountId } as { id: string } }));
    const committed = performance.now();
    for (let arrived = next; ; arrived = next) {
      next = live.next();
      if ((await idOf(arrived)) === id) break;
    }
    latencies.push(performance.now() - committed);
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 300)); // commits at any moment of a poll period
  }
  await live.return?.();
  await events.close();
  return latencies.sort((a, b) => a - b);
}

const at = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1);
console.log(`| database | wake-up | events | p50 ms | p90 ms | p99 ms |\n|---|---|---:|---:|---:|---:|`);
for (const mode of ['poll 250 ms', 'notify'] as const) {
  const sorted = await measure(mode);
  console.log(`| ${db.kind} | ${mode} | ${count} | ${at(sorted, 0.5)} | ${at(sorted, 0.9)} | ${at(sorted, 0.99)} |`);
}
await close();
