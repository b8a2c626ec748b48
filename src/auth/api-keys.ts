import { Redis } from 'ioredis';
import type { Listen } from '../db/listen.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../logger.js';
import { closeRedis } from '../redis.js';
import { isApiScope, type ApiScope } from './scopes.js';
import { prefixOf, secretMatches } from './api-key-secret.js';

/** What a request authenticated by an API key may do: act for one account within its scopes. */
export type ApiKeyGrant = { id: string; accountId: string; scopes: ReadonlySet<ApiScope> };

type Entry = ApiKeyGrant & { hash: string; expiresAt: number | null; revoked: boolean; usedAt: number };

/** The channel the api_keys trigger notifies, and the Redis channel revocations are published on. */
export const API_KEYS_CHANNEL = 'crm_api_keys';
const USED_EVERY_MS = 60_000;

/**
 * Checks presented secrets (docs/decisions.md §15). A warm instance answers from memory (bounded,
 * oldest out); a revocation anywhere empties every instance's memory within a second, by Redis
 * pub/sub where REDIS_URL is set and by PostgreSQL LISTEN/NOTIFY (a trigger on api_keys) on every
 * database: either one alone is enough, so Redis being down leaves LISTEN/NOTIFY in force.
 */
export class ApiKeys {
  private readonly entries = new Map<string, Entry>();
  // Bumped by every forget(): a lookup that started before it must not refill the cache with a stale row.
  private generation = 0;
  private readonly pending = new Set<Promise<unknown>>();
  private stops: (() => Promise<void>)[] = [];
  private publisher: Redis | null = null;

  constructor(
    private readonly db: PrismaClient,
    private readonly log: Pick<Logger, 'warn'>,
    private readonly capacity = 10_000,
  ) {}

  /** Starts hearing revocations: `listen` (LISTEN/NOTIFY) and/or Redis; tests pass one at a time. */
  async start(opts: { listen?: Listen; redisUrl?: string }): Promise<this> {
    if (opts.listen) this.stops.push(await opts.listen(API_KEYS_CHANNEL, () => this.forget()));
    if (opts.redisUrl) {
      const subscriber = new Redis(opts.redisUrl, { maxRetriesPerRequest: 1 });
      const publisher = new Redis(opts.redisUrl, { maxRetriesPerRequest: 1 });
      for (const client of [subscriber, publisher]) client.on('error', () => undefined); // they reconnect on their own
      subscriber.on('message', () => this.forget());
      // Reconnected after an outage: what was revoked meanwhile was not heard.
      subscriber.on('ready', () => this.forget());
      subscriber.subscribe(API_KEYS_CHANNEL).catch((err) => this.log.warn({ err }, 'api keys: Redis subscribe failed'));
      this.publisher = publisher;
      this.stops.push(async () => void (await Promise.all([closeRedis(subscriber), closeRedis(publisher)])));
    }
    return this;
  }

  /** The grant of a valid, unrevoked, unexpired secret; null otherwise (the caller answers 401). */
  async authenticate(secret: string): Promise<ApiKeyGrant | null> {
    const prefix = prefixOf(secret);
    if (!prefix) return null;
    const entry = this.entries.get(prefix) ?? (await this.load(prefix));
    if (!entry || entry.revoked || !secretMatches(secret, entry.hash)) return null;
    if (entry.expiresAt !== null && entry.expiresAt <= Date.now()) return null;
    this.touch(entry);
    return { id: entry.id, accountId: entry.accountId, scopes: entry.scopes };
  }

  /** Whether a key is still good, asked of the database (a long-lived subscription's re-check). */
  async isLive(id: string): Promise<boolean> {
    const row = await this.db.apiKey.findUnique({ where: { id }, select: { revokedAt: true, expiresAt: true } });
    return !!row && !row.revokedAt && (!row.expiresAt || row.expiresAt.getTime() > Date.now());
  }

  /** Forgets every cached key: the next request of each reads its row again. */
  forget(): void {
    this.generation++;
    this.entries.clear();
  }

  /** After a revocation commits: this instance at once, the others through Redis (and the trigger's NOTIFY). */
  revoked(): void {
    this.forget();
    this.publisher?.publish(API_KEYS_CHANNEL, '').catch((err) => this.log.warn({ err }, 'api keys: Redis publish failed'));
  }

  /** Resolves when the lastUsedAt writes under way are done (close, and tests that read the column). */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  async close(): Promise<void> {
    // A database already closed (a test of an unreachable database) has nothing left to unlisten.
    for (const stop of this.stops) await stop().catch(() => undefined);
    this.stops = [];
    await this.flush();
  }

  private async load(prefix: string): Promise<Entry | null> {
    const generation = this.generation;
    const row = await this.db.apiKey.findUnique({ where: { prefix } });
    if (!row) return null;
    const entry: Entry = {
      id: row.id,
      accountId: row.accountId,
      scopes: new Set(row.scopes.filter(isApiScope)),
      hash: row.secretHash,
      expiresAt: row.expiresAt?.getTime() ?? null,
      revoked: row.revokedAt !== null,
      usedAt: row.lastUsedAt?.getTime() ?? 0,
    };
    if (generation !== this.generation) return entry; // used once, not kept: a revocation came meanwhile
    if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(prefix, entry);
    return entry;
  }

  /**
   * lastUsedAt, at most once a minute per key: this instance writes at most that often, and the
   * statement's own condition keeps other instances from writing within the same minute. The
   * request does not wait for it.
   */
  private touch(entry: Entry): void {
    const now = Date.now();
    if (now - entry.usedAt < USED_EVERY_MS) return;
    entry.usedAt = now;
    const write = this.db.$executeRaw`
      UPDATE api_keys SET last_used_at = now() WHERE id = ${entry.id}::uuid
      AND (last_used_at IS NULL OR last_used_at <= now() - interval '1 minute')`
      .catch((err: unknown) => this.log.warn({ err }, 'api keys: lastUsedAt not written'))
      .finally(() => this.pending.delete(write));
    this.pending.add(write);
  }
}
