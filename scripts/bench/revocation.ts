/**
 * From an API key's revocation to another instance refusing it (docs/decisions.md §15 and §24 promise
 * within one second), by each path alone: PostgreSQL LISTEN/NOTIFY, Redis pub/sub when REDIS_URL is
 * set, and neither (an instance behind a transaction pooler: only the cache entry's 0.9 s life stops
 * it). Two key registries on one database stand for two instances; the second has the key warm
 * in its cache (test/auth/api-key-revocation.test.ts).
 *   DATABASE_URL=postgresql://... REDIS_URL=redis://... node --import tsx scripts/bench/revocation.ts [keys per path]
 * Without DATABASE_URL it measures the embedded database. Results: BENCHMARKS.md "API key revocation".
 */
import { createApiKey, revokeApiKey } from '../../src/apikeys/apikey.service.js';
import { ApiKeys } from '../../src/auth/api-keys.js';
import { SYSTEM } from '../../src/events/types.js';
import { createLogger } from '../../src/logger.js';
import { openScratch } from './scratch.js';

const count = Number(process.argv[2] ?? 50);
const { config, db, accountId, close } = await openScratch('revocation');
const log = createLogger({ level: 'silent' });

async function measure(hears: { listen?: boolean; redisUrl?: string }): Promise<number[]> {
  const revoking = await new ApiKeys(db.prisma, log).start({ redisUrl: hears.redisUrl });
  const other = await new ApiKeys(db.prisma, log).start({ listen: hears.listen ? db.listen : undefined, redisUrl: hears.redisUrl });
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const { apiKey, secret } = await createApiKey(db.prisma, { accountId, name: `bench ${i}`, scopes: ['CONTACTS_READ'] }, null, SYSTEM);
    if (!(await other.authenticate(secret))) throw new Error('the new key was refused');
    await db.prisma.$transaction((tx) => revokeApiKey(tx, apiKey, SYSTEM));
    revoking.revoked();
    const committed = performance.now();
    while (await other.authenticate(secret)) await new Promise((resolve) => setImmediate(resolve));
    latencies.push(performance.now() - committed);
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 100));
  }
  await Promise.all([revoking.close(), other.close()]);
  return latencies.sort((a, b) => a - b);
}

const at = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1);
console.log(`| database | path | keys | p50 ms | p90 ms | p99 ms | max ms |\n|---|---|---:|---:|---:|---:|---:|`);
const paths: [string, { listen?: boolean; redisUrl?: string }][] = [['LISTEN/NOTIFY', { listen: true }], ['neither (0.9 s cache life)', {}]];
if (config.redisUrl) paths.push(['Redis pub/sub', { redisUrl: config.redisUrl }]);
for (const [name, hears] of paths) {
  const sorted = await measure(hears);
  console.log(`| ${db.kind} | ${name} | ${count} | ${at(sorted, 0.5)} | ${at(sorted, 0.9)} | ${at(sorted, 0.99)} | ${sorted.at(-1)!.toFixed(1)} |`);
}
await close();
