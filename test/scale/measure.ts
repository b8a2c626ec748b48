// node --import tsx test/scale/measure.ts <bench database URL> <account id> <owner id>
// The numbers in docs/scaling.md ("As run on this machine"): the bench data (npm run bench:data) is
// copied into a private primary, a standby is made with pg_basebackup -R, PgBouncer (transaction
// mode) goes in front of both, and the app runs direct, pooled, and pooled with the replica.
// Not a test: it prints JSON and leaves nothing running. Needs the same binaries as test/scale.
import { execSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import pg from 'pg';
import { mintToken } from '../../src/auth/token.js';
import { rootRules } from '../../src/graphql/rules.js';
import { schema } from '../../src/schema.js';

// The declared limits of two fields, as the limiter takes them (src/graphql/rules.ts names a limit after its field).
const ruleOf = (kind: 'query' | 'mutation', name: string) => ({ name, ...rootRules(schema, kind, name)!.limit! });
const LIMITS = { contacts: ruleOf('query', 'contacts'), submitLeadForm: ruleOf('mutation', 'submitLeadForm') };
import { createRateLimiter } from '../../src/ratelimit/limiter.js';
import { TEST_SECRET } from '../helpers/app.js';
import { Cluster, freePort, PG_BIN, Pgbouncer, query, startServer, stopServer } from './support.js';

const [benchUrl, accountId, ownerId] = process.argv.slice(2);
if (!benchUrl || !accountId || !ownerId) throw new Error('usage: measure.ts <bench database URL> <account id> <owner id>');
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DURATION_S = Number(process.env.MEASURE_SECONDS ?? 10);
const out: Record<string, unknown> = {};

const dir = await mkdtemp(path.join(tmpdir(), 'crm-measure-'));
const clusters: Cluster[] = [];
let bouncer: Pgbouncer | undefined;
try {
  const primary = await Cluster.primary(dir);
  clusters.push(primary);
  await query(primary.url(), 'CREATE DATABASE crm');
  execSync(`${PG_BIN}/pg_dump -Fc '${benchUrl}' | ${PG_BIN}/pg_restore --no-owner -d '${primary.url('crm')}'`, { stdio: 'inherit', shell: '/bin/bash' });
  await query(primary.url('crm'), 'VACUUM ANALYZE');
  const standby = await Cluster.standbyOf(primary);
  clusters.push(standby);
  bouncer = new Pgbouncer(dir, await freePort());
  await bouncer.start({ crm: primary.url('crm'), crm_replica: standby.url('crm') }, { admin_users: 'postgres', default_pool_size: 20 });

  const token = await mintToken(TEST_SECRET, { sub: ownerId });
  const base = { AUTH_JWT_SECRET: TEST_SECRET, RATE_LIMITS: 'off', LOG_LEVEL: 'info', DATABASE_POOL_MAX: '10' };
  const configs: Record<string, Record<string, string>> = {
    direct: { ...base, DATABASE_URL: primary.url('crm') },
    pgbouncer: { ...base, DATABASE_URL: bouncer.url('crm'), DATABASE_DIRECT_URL: primary.url('crm') },
    'pgbouncer+replica': { ...base, DATABASE_URL: bouncer.url('crm'), DATABASE_DIRECT_URL: primary.url('crm'), DATABASE_REPLICA_URLS: bouncer.url('crm_replica') },
  };
  const commits = async (cluster: Cluster) => Number((await query(cluster.url('crm'), "SELECT xact_commit FROM pg_stat_database WHERE datname = 'crm'"))[0].xact_commit);
  const pools = () => query(bouncer!.url('pgbouncer'), 'SHOW POOLS');

  for (const [name, env] of Object.entries(configs)) {
    const t0 = Date.now();
    const servers = await Promise.all([startServer(env, 120_000), startServer(env, 120_000)]);
    const startMs = Date.now() - t0;
    try {
      const before = { primary: await commits(primary), standby: await commits(standby) };
      let maxServerConnections = 0;
      const poll = setInterval(() => {
        void pools().then((rows) => {
          const used = rows.filter((r) => r.database === 'crm' || r.database === 'crm_replica').reduce((n, r) => n + Number(r.sv_active) + Number(r.sv_idle) + Number(r.sv_used), 0);
          maxServerConnections = Math.max(maxServerConnections, used);
        }, () => {});
      }, 200);
      // Two instances behind one "load balancer": autocannon's connections split between them.
      const runs = await Promise.all(
        servers.map((s) =>
          autocannon({
            url: `${s.baseUrl}/api/v1/contacts?account_id=${accountId}&page=2&page_size=25`,
            headers: { authorization: `Bearer ${token}` },
            connections: 16,
            duration: DURATION_S,
          }),
        ),
      );
      clearInterval(poll);
      const after = { primary: await commits(primary), standby: await commits(standby) };
      out[name] = {
        twoInstancesReadyMs: startMs,
        listRequestsPerSecond: Math.round(runs.reduce((n, r) => n + r.requests.average, 0)),
        latencyMs: { p50: runs[0]!.latency.p50, p99: Math.max(...runs.map((r) => r.latency.p99)) },
        non2xx: runs.reduce((n, r) => n + r.non2xx + r.errors, 0),
        transactions: { primary: after.primary - before.primary, standby: after.standby - before.standby },
        pgbouncerServerConnectionsMax: name === 'direct' ? null : maxServerConnections,
      };

      if (name === 'pgbouncer+replica') {
        // Replica lag under a burst of 1,000 creates, sampled every few ms: the age of the oldest
        // primary WAL position the standby has not replayed (the app's own measure, src/db/replicas.ts).
        const samples: { at: number; lsn: bigint }[] = [];
        let maxLagMs = 0;
        let sampling = true;
        const lsn = (t: string) => { const [h, l] = t.split('/'); return (BigInt(`0x${h}`) << 32n) | BigInt(`0x${l}`); };
        const [onPrimary, onStandby] = [new pg.Client(primary.url('crm')), new pg.Client(standby.url('crm'))];
        await Promise.all([onPrimary.connect(), onStandby.connect()]);
        let maxBytesBehind = 0n;
        const sampler = (async () => {
          while (sampling) {
            const p = lsn((await onPrimary.query('SELECT pg_current_wal_lsn()::text AS p')).rows[0].p);
            samples.push({ at: Date.now(), lsn: p });
            const r = lsn((await onStandby.query('SELECT pg_last_wal_replay_lsn()::text AS r')).rows[0].r);
            const behind = samples.find((s) => s.lsn > r);
            if (behind) maxLagMs = Math.max(maxLagMs, Date.now() - behind.at);
            if (p - r > maxBytesBehind) maxBytesBehind = p - r;
          }
        })();
        const t1 = Date.now();
        const burst = await autocannon({
          url: `${servers[0]!.baseUrl}/api/v1/contacts`,
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ account_id: accountId, first_name: 'Burst' }),
          connections: 32,
          amount: 1000,
        } as Parameters<typeof autocannon>[0]);
        const burstMs = Date.now() - t1;
        sampling = false;
        await sampler;
        await Promise.all([onPrimary.end(), onStandby.end()]);
        out.replicaLagUnderBurst = { creates: burst.requests.total, non2xx: burst.non2xx, burstMs, maxLagMs, maxBytesBehind: Number(maxBytesBehind), lagSamples: samples.length };
        out.replicaSkippedLines = servers.map((s) => (s.output().match(/read replica skipped/g) ?? []).length);
      }
    } finally {
      await Promise.all(servers.map(stopServer));
    }
  }

  // Redis: one full window of each kind of limit key (a sorted set of timestamps).
  const prefix = `measure:${randomUUID().slice(0, 8)}:`;
  const limiter = createRateLimiter({ redisUrl: REDIS_URL, keyPrefix: prefix, log: () => {} });
  for (let i = 0; i < LIMITS.contacts.max; i++) await limiter.consume(LIMITS.contacts, 'user:full-window');
  await limiter.consume(LIMITS.contacts, 'user:one-call');
  for (let i = 0; i < LIMITS.submitLeadForm.max; i++) await limiter.consume(LIMITS.submitLeadForm, 'ip:203.0.113.7');
  await limiter.close();
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}*`);
  out.redisKeyBytes = Object.fromEntries(await Promise.all(keys.map(async (k) => [k.slice(prefix.length), await redis.memory('USAGE', k)])));
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
} finally {
  bouncer?.stop();
  for (const c of clusters.reverse()) c.stop('fast');
  await rm(dir, { recursive: true, force: true });
}
console.log(JSON.stringify(out, null, 2));
