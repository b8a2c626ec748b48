// Read replicas (docs/scaling.md#read-replicas). Prisma's read-replicas extension does the routing:
// model reads made outside a transaction go to its replica client, writes and transactions to the
// primary. It picks replicas blindly, so its one "replica" here is a client whose adapter sends each
// query to a replica that answers and is caught up (lag probed below), else to the primary.
import { PrismaPg } from '@prisma/adapter-pg';
import type { IsolationLevel, SqlDriverAdapter, SqlDriverAdapterFactory, SqlQuery } from '@prisma/driver-adapter-utils';
import { readReplicas } from '@prisma/extension-read-replicas';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { PrismaClient } from '../generated/prisma/client.js';
import { BoundedPool, type Bounds } from './bounds.js';
import { poolQuery, runRawReads } from './raw.js';
import { isDatabaseUnavailable } from './unavailable.js';

/** `db.reader`: the client for reads that may trail the primary by up to the allowed lag. */
export type Reader = PrismaClient & {
  /** For raw SQL: a client whose every query goes to a healthy replica, else to the primary. */
  $replica(): PrismaClient;
  /** The primary itself. */
  $primary(): PrismaClient;
  /** A replica that has replayed every write committed on the primary before this call, else the primary. */
  $caughtUp(): Promise<PrismaClient>;
  /** The same, with its `pg` pool (null on PGlite): for the account export's pages (src/exports/pages.ts). */
  $caughtUpSource(): Promise<{ client: PrismaClient; pool: pg.Pool | null }>;
  /**
   * The `pg` pool of a healthy replica, else of the primary; null without one (PGlite). For a long
   * read of many pages whose answers must not outlive the page: the contacts CSV (see there).
   */
  $replicaPool(): pg.Pool | null;
};

export type ReplicaState = { name: string; healthy: boolean; lagMs: number | null; reason?: string };
export type ReplicaEvent = { replica: string; healthy: boolean; lagMs: number | null; reason?: string };

export type ReplicaOptions = {
  /** The primary's URL: the lag probe keeps a connection of its own there. */
  primaryUrl: string;
  urls: string[];
  /** A replica further behind than this is skipped until it catches up. */
  maxLagMs: number;
  /** Connections per replica pool. */
  poolMax: number;
  /** The primary's bounds (docs/faults.md), applied alike to each replica pool. */
  bounds: Bounds;
  /** Told when a replica is skipped or used again (one event per change). */
  onChange?: (event: ReplicaEvent) => void;
  onConnectionError?: (err: Error) => void;
};

export type Replicas = { reader: Reader; status(): ReplicaState[]; close(): Promise<void> };

/** The reader of a database without replicas (PGlite, or none configured): the primary for everything. */
export function primaryOnly(primary: PrismaClient, primaryPool: pg.Pool | null = null): Replicas {
  const reader = primary.$extends({
    client: {
      $replica: () => primary,
      $primary: () => primary,
      $caughtUp: async () => primary,
      $caughtUpSource: async () => ({ client: primary, pool: primaryPool }),
      $replicaPool: () => primaryPool,
    },
  }) as unknown as Reader;
  return { reader, status: () => [], close: async () => {} };
}

type Replica = {
  name: string;
  pool: pg.Pool;
  probe: pg.Pool;
  client: PrismaClient;
  adapter: Promise<SqlDriverAdapter>;
  healthy: boolean;
  lagMs: number | null;
  replayLsn: bigint | null;
  reason?: string;
};

/** How long an export waits for a replica to replay its own audit row before reading the primary. */
const CATCH_UP_WAIT_MS = 250;

/** LSN text "16/B374D848" as a number, so LSNs compare. */
const lsn = (text: string): bigint => {
  const [hi, lo] = text.split('/');
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
};
const PRIMARY_LSN = 'SELECT pg_current_wal_lsn()::text AS lsn';
// A standby answers with what it has replayed; a server that is not one (a promoted replica, or the
// primary listed by mistake) with its own position, so it never looks behind.
const REPLICA_LSN = 'SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END)::text AS lsn';

/** The host:port/database of a URL, for logs: never its password. */
const nameOf = (url: string) => {
  const u = new URL(url);
  return `${u.hostname}:${u.port || 5432}${u.pathname}`;
};

/**
 * Replica pools, their lag probe, and the reader. Lag is time, measured without trusting clocks or
 * write traffic: every probe samples the primary's WAL position, and a replica's lag is the age of
 * the oldest sample it has not replayed yet (exact to one probe interval).
 */
export function openReplicas(primary: PrismaClient, primaryPool: pg.Pool, opts: ReplicaOptions): Replicas {
  if (opts.urls.length === 0) return primaryOnly(primary, primaryPool);
  const intervalMs = Math.min(1_000, Math.max(50, Math.floor(opts.maxLagMs / 4)));
  const probeTimeoutMs = Math.max(1_000, opts.maxLagMs);
  const onError = opts.onConnectionError ?? (() => {});
  // Its own connection: the lag probe neither waits behind nor takes the app's pool connections.
  const primaryProbe = new pg.Pool({ connectionString: opts.primaryUrl, max: 1, query_timeout: probeTimeoutMs, application_name: 'crm-replica-probe' });
  primaryProbe.on('error', onError);

  const replicas: Replica[] = opts.urls.map((url) => {
    // Bounded as the primary's pool is: a wait for a connection, each connection attempt and each
    // statement (the role's statement_timeout default reaches the standby with the catalog).
    const pool = new BoundedPool({ connectionString: url, max: opts.poolMax, application_name: 'crm-reader' }, opts.bounds);
    pool.on('error', onError);
    const probe = new pg.Pool({ connectionString: url, max: 1, query_timeout: probeTimeoutMs, connectionTimeoutMillis: probeTimeoutMs, application_name: 'crm-replica-probe' });
    probe.on('error', onError);
    const factory = new PrismaPg(pool, { onConnectionError: onError });
    return {
      name: nameOf(url),
      pool,
      probe,
      client: new PrismaClient({ adapter: factory }),
      adapter: factory.connect(),
      healthy: false, // until the first probe says otherwise
      lagMs: null,
      replayLsn: null,
    };
  });

  const setState = (r: Replica, healthy: boolean, lagMs: number | null, reason?: string) => {
    const changed = r.healthy !== healthy;
    Object.assign(r, { healthy, lagMs, reason: healthy ? undefined : reason });
    if (changed) opts.onChange?.({ replica: r.name, healthy, lagMs, reason: r.reason });
  };

  const samples: { at: number; lsn: bigint }[] = [];
  const probeOnce = async () => {
    let position: bigint;
    try {
      position = lsn((await primaryProbe.query<{ lsn: string }>(PRIMARY_LSN)).rows[0]!.lsn);
    } catch {
      return; // the primary is down: nothing to compare with, and nothing to fall back to either
    }
    const now = Date.now();
    samples.push({ at: now, lsn: position });
    // Older samples than the allowed lag (and a margin) cannot change a decision.
    while (samples.length > 1 && samples[1]!.at < now - opts.maxLagMs - 2 * intervalMs) samples.shift();
    await Promise.all(
      replicas.map(async (r) => {
        try {
          const replay = lsn((await r.probe.query<{ lsn: string }>(REPLICA_LSN)).rows[0]!.lsn);
          r.replayLsn = replay;
          const behind = samples.find((s) => s.lsn > replay);
          const lagMs = behind ? Date.now() - behind.at : 0;
          setState(r, lagMs <= opts.maxLagMs, lagMs, `lags ${lagMs} ms (DATABASE_REPLICA_MAX_LAG_MS=${opts.maxLagMs})`);
        } catch (err) {
          setState(r, false, null, `unreachable: ${(err as Error).message}`);
        }
      }),
    );
  };

  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  // The probe under way, so that close() ends the pools after it, not under its query.
  let probing: Promise<void> = Promise.resolve();
  const loop = () => {
    probing = probeOnce().finally(() => {
      if (!stopped) (timer = setTimeout(loop, intervalMs)).unref();
    });
  };
  loop();

  let next = 0;
  const pick = (): Replica | undefined => {
    const healthy = replicas.filter((r) => r.healthy);
    return healthy.length ? healthy[next++ % healthy.length] : undefined;
  };
  const primaryAdapter = new PrismaPg(primaryPool, { onConnectionError: onError }).connect();

  // A replica that fails a query is skipped at once (the probe takes it back), and the read retried
  // on the primary: a read is safe to repeat. 40001 on a standby is a recovery conflict.
  const route = async <T>(onReplica: (r: Replica) => Promise<T>, onPrimary: () => Promise<T>): Promise<T> => {
    const replica = pick();
    if (replica) {
      try {
        return await onReplica(replica);
      } catch (err) {
        if (!isDatabaseUnavailable(err) && !isRecoveryConflict(err)) throw err;
        setState(replica, false, replica.lagMs, `query failed: ${(err as Error).message}`);
      }
    }
    return onPrimary();
  };
  const routeAdapter = async <T>(run: (adapter: SqlDriverAdapter) => Promise<T>): Promise<T> =>
    route(async (r) => run(await r.adapter), async () => run(await primaryAdapter));
  const routing: SqlDriverAdapterFactory = {
    provider: 'postgres',
    adapterName: '@prisma/adapter-pg',
    connect: async () => {
      const fallback = await primaryAdapter;
      return {
        provider: 'postgres',
        adapterName: '@prisma/adapter-pg',
        queryRaw: (query: SqlQuery) => routeAdapter((a) => a.queryRaw(query)),
        executeRaw: (query: SqlQuery) => routeAdapter((a) => a.executeRaw(query)),
        // Never sent here by the extension; the primary keeps them should anything try.
        executeScript: (script: string) => fallback.executeScript(script),
        startTransaction: (level?: IsolationLevel) => fallback.startTransaction(level),
        getConnectionInfo: () => fallback.getConnectionInfo?.() ?? { supportsRelationJoins: true },
        dispose: async () => {},
      };
    },
  };
  const routed = new PrismaClient({ adapter: routing });
  runRawReads(routed, (sql) => route((r) => poolQuery(r.pool, sql), () => poolQuery(primaryPool, sql)));

  /**
   * A replica that has replayed the primary's position at this call (its last probe says so, or it
   * does within CATCH_UP_WAIT_MS: streaming usually takes milliseconds), else null: the primary.
   */
  const caughtUpReplica = async (): Promise<Replica | null> => {
    if (!replicas.some((r) => r.healthy)) return null;
    const target = lsn((await primaryProbe.query<{ lsn: string }>(PRIMARY_LSN)).rows[0]!.lsn);
    const deadline = Date.now() + Math.min(CATCH_UP_WAIT_MS, opts.maxLagMs);
    for (;;) {
      const healthy = replicas.filter((r) => r.healthy);
      const ready = healthy.find((r) => r.replayLsn !== null && r.replayLsn >= target);
      if (ready) return ready;
      for (const r of healthy) {
        const replay = await r.probe.query<{ lsn: string }>(REPLICA_LSN).then((res) => lsn(res.rows[0]!.lsn), () => null);
        if (replay !== null && replay >= target) return r;
      }
      if (healthy.length === 0 || Date.now() >= deadline) return null;
      await sleep(10);
    }
  };
  const caughtUp = async (): Promise<PrismaClient> => (await caughtUpReplica())?.client ?? primary;
  const caughtUpSource = async () => {
    const replica = await caughtUpReplica();
    return replica ? { client: replica.client, pool: replica.pool } : { client: primary, pool: primaryPool };
  };

  const reader = primary.$extends(readReplicas({ replicas: [routed as never] })).$extends({
    client: { $caughtUp: caughtUp, $caughtUpSource: caughtUpSource, $replicaPool: () => pick()?.pool ?? primaryPool },
  }) as unknown as Reader;

  return {
    reader,
    status: () => replicas.map(({ name, healthy, lagMs, reason }) => ({ name, healthy, lagMs, ...(reason ? { reason } : {}) })),
    close: async () => {
      stopped = true;
      clearTimeout(timer);
      await probing.catch(() => undefined);
      await routed.$disconnect();
      for (const r of replicas) await r.client.$disconnect();
      await Promise.all([primaryProbe.end(), ...replicas.flatMap((r) => [r.pool.end(), r.probe.end()])]);
    },
  };
}

/** A standby's recovery conflict (40001), as the adapter wraps it or as `pg` raises it. */
function isRecoveryConflict(err: unknown): boolean {
  const e = err as { code?: string; cause?: { kind?: string; code?: string } };
  return e?.code === '40001' || (e?.cause?.kind === 'postgres' && e.cause.code === '40001');
}
