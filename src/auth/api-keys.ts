import { Redis } from 'ioredis';
import type { Listen } from '../db/listen.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../logger.js';
import { closeRedis } from '../redis.js';
import { isApiScope, type ApiScope } from '../scopes.js';
import { prefixOf, secretMatches } from './api-key-secret.js';

/** What a request authenticated by an API key may do: act for one account within its scopes. */
export type ApiKeyGrant = { id: string; accountId: string; prefix: string; scopes: ReadonlySet<ApiScope> };

/** `checkedAt`: when its row was read (performance.now()), so it is trusted for KEY_FRESH_MS from then. */
type Entry = ApiKeyGrant & { hash: string; expiresAt: number | null; revoked: boolean; usedAt: number; checkedAt: number };

/**
 * How long a key's row, once read, is trusted without reading it again (docs/decisions.md §24): with
 * the read that refreshes it (tens of ms on a loaded machine), a revocation or a changed expiry
 * reaches every instance within a second, whether or not a notice can (a transaction pooler drops
 * LISTEN's). About one primary-key read a second per key in use on an instance.
 */
export const KEY_FRESH_MS = 900;

/** The channel the api_keys trigger notifies, and the Redis channel revocations are published on. */
export const API_KEYS_CHANNEL = 'crm_api_keys';
const USED_EVERY_MS = 60_000;

/**
 * Checks presented secrets (docs/decisions.md §15, §24). A warm instance answers from memory
 * (bounded, oldest out) for at most KEY_FRESH_MS after reading a key's row, then reads it again: that
 * alone stops a revoked or expired key everywhere within a second, in every set-up. A revocation's
 * notice (Redis pub/sub where REDIS_URL is set, PostgreSQL LISTEN/NOTIFY from a trigger on api_keys)
 * empties the memory sooner where it arrives.
 */
export class ApiKeys {
  private readonly entries = new Map<string, Entry>();
  // Reads under way by prefix: the requests that find a key stale at once share one read.
  private readonly loading = new Map<string, Promise<Entry | null>>();
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
    const entry = await this.current(prefix);
    if (!entry || !usable(entry) || !secretMatches(secret, entry.hash)) return null;
    this.touch(entry);
    return { id: entry.id, accountId: entry.accountId, prefix, scopes: entry.scopes };
  }

  /**
   * Whether the key behind a long-lived subscription is still good: as fresh as a request's check,
   * or read from the database now (`now`, on the events that may have ended it).
   */
  async isLive(grant: ApiKeyGrant, now = false): Promise<boolean> {
    const entry = now ? await this.read(grant.prefix) : await this.current(grant.prefix);
    return !!entry && entry.id === grant.id && usable(entry);
  }

  /** Forgets every cached key: the next request of each reads its row again. */
  forget(): void {
    this.generation++;
    this.entries.clear();
    this.loading.clear(); // a read begun before a revocation must not answer a request made after it
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

  /** The cached entry while fresh, else its row read again (one read shared by concurrent callers). */
  private current(prefix: string): Entry | Promise<Entry | null> {
    const entry = this.entries.get(prefix);
    if (entry && performance.now() - entry.checkedAt < KEY_FRESH_MS) return entry;
    let loading = this.loading.get(prefix);
    if (!loading) {
      const read = this.read(prefix).finally(() => this.loading.get(prefix) === read && this.loading.delete(prefix));
      this.loading.set(prefix, (loading = read));
    }
    return loading;
  }

  private async read(prefix: string): Promise<Entry | null> {
    const generation = this.generation;
    const checkedAt = performance.now(); // before the read: the row may be a little older than its answer
    const row = await this.db.apiKey.findUnique({ where: { prefix } });
    const previous = this.entries.get(prefix);
    if (!row) {
      if (generation === this.generation) this.entries.delete(prefix); // its account was deleted
      return null;
    }
    const entry: Entry = {
      id: row.id,
      accountId: row.accountId,
      prefix,
      scopes: new Set(row.scopes.filter(isApiScope)),
      hash: row.secretHash,
      expiresAt: row.expiresAt?.getTime() ?? null,
      revoked: row.revokedAt !== null,
      // This instance's own lastUsedAt write may not have landed yet: do not write it again.
      usedAt: Math.max(row.lastUsedAt?.getTime() ?? 0, previous?.usedAt ?? 0),
      checkedAt,
    };
    if (generation !== this.generation) return entry; // used once, not kept: a revocation came meanwhile
    this.entries.delete(prefix); // re-inserted last: the oldest read goes first when full
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

/** Neither revoked nor past its expiry (the row's time, on this instance's clock). */
const usable = (entry: Entry) => !entry.revoked && (entry.expiresAt === null || entry.expiresAt > Date.now());
