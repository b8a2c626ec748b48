/**
 * From an event's commit to the live bus (what an SSE or WebSocket subscriber waits for), with the
 * worker woken by LISTEN/NOTIFY against the former 250 ms poll alone, in one run:
 *   DATABASE_URL=postgresql://... node --import tsx scripts/bench/event-latency.ts [events per mode]
 * Without DATABASE_URL it measures the embedded database. Results: BENCHMARKS.md "Live events".
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { applyMigrations } from '../../src/db/migrate.js';
import { emit } from '../../src/events/emit.js';
import { openEvents } from '../../src/events/runtime.js';
import { SYSTEM } from '../../src/events/types.js';
import { createLogger } from '../../src/logger.js';

const count = Number(process.argv[2] ?? 100);
// DATA_DIR is where the development webhook key is written: a temp directory, never the checkout.
const dataDir = await mkdtemp(path.join(tmpdir(), 'crm-event-latency-'));
const config = loadConfig({ ...process.env, REDIS_URL: '', DATA_DIR: dataDir });
const log = createLogger({ level: 'silent' });
const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: 'memory://' });
await applyMigrations(db);
const [{ id: accountId }] = await db.prisma.$queryRaw<[{ id: string }]>`
  WITH owner AS (INSERT INTO users (id) VALUES (gen_random_uuid()) RETURNING id)
  INSERT INTO accounts (id, name, owner_id) SELECT gen_random_uuid(), 'latency', id FROM owner RETURNING id`;

async function measure(mode: 'notify' | 'poll 250 ms'): Promise<number[]> {
  const events = await openEvents({ ...config, events: { ...config.events, pollMs: mode === 'notify' ? 2_000 : 250 } }, db.prisma, log, {
    worker: true,
    listen: mode === 'notify' ? db.listen : undefined,
  });
  const live = events.bus.subscribe('accountEvents', accountId)[Symbol.asyncIterator]();
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const id = randomUUID();
    await db.prisma.$transaction((tx) => emit(tx, { type: 'contact.created', accountId, actor: SYSTEM, object: { id, accountId } as { id: string } }));
    const committed = performance.now();
    for (let next = await live.next(); (next.value?.data as { object?: { id?: string } } | null)?.object?.id !== id; next = await live.next());
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
await db.close();
await rm(dataDir, { recursive: true, force: true });
