import { AtomicStore, type HitResult, type TakeResult } from './atomic-store.js';
import { leak } from './budget.js';

type Entry = { stamps: number[]; expiresAt: number };

export type MemoryStoreOptions = {
  /** Cap on tracked buckets; beyond it the least recently used one is dropped. */
  maxKeys?: number;
  /** How often idle buckets (nothing left in their window) are swept. */
  sweepEveryMs?: number;
  /** Clock, injectable for tests. */
  now?: () => number;
};

/**
 * In-memory sliding-window log for one instance. Atomic because `hit` is synchronous: Node runs it
 * to completion, so no other call can interleave between the read and the write.
 *
 * Bounded: each bucket keeps at most `max` timestamps (refused calls are never stored), buckets whose
 * window has passed are swept periodically, and the number of buckets is capped with LRU eviction
 * (a Map keeps insertion order; a touched bucket is re-inserted at the end). Evicting a bucket that
 * still has calls in its window forgets them: with the cap far above normal use, that only happens
 * under a flood of distinct identities, where staying bounded matters more.
 */
export class MemoryStore extends AtomicStore {
  private readonly entries = new Map<string, Entry>();
  private readonly budgets = new Map<string, { points: number; at: number; expiresAt: number }>();
  private readonly maxKeys: number;
  private readonly now: () => number;
  private readonly timer: NodeJS.Timeout;

  constructor(opts: MemoryStoreOptions = {}) {
    super();
    this.maxKeys = opts.maxKeys ?? 100_000;
    this.now = opts.now ?? Date.now;
    this.timer = setInterval(() => this.sweep(), opts.sweepEveryMs ?? 60_000);
    this.timer.unref(); // never keeps the process alive
  }

  /** Number of buckets currently held. */
  get size(): number {
    return this.entries.size;
  }

  hit(key: string, max: number, windowMs: number): HitResult {
    const now = this.now();
    const live = (this.entries.get(key)?.stamps ?? []).filter((t) => t > now - windowMs);
    const allowed = live.length < max;
    // Refused: keep the newest `max` only, so the oldest kept is the one whose expiry lets a call in.
    const stamps = allowed ? [...live, now] : live.slice(-max);
    this.entries.delete(key);
    this.entries.set(key, { stamps, expiresAt: stamps[stamps.length - 1]! + windowMs });
    while (this.entries.size > this.maxKeys) {
      const lru = this.entries.keys().next().value as string;
      this.entries.delete(lru);
    }
    const undo = allowed ? () => this.forget(key, now) : undefined;
    return { allowed, count: stamps.length, resetMs: stamps[0]! + windowMs - now, before: live, undo };
  }

  /** Takes one call recorded at `at` back out of `key`'s window. */
  private forget(key: string, at: number): void {
    const stamps = this.entries.get(key)?.stamps;
    const i = stamps?.lastIndexOf(at) ?? -1;
    if (i >= 0) stamps!.splice(i, 1);
  }

  take(key: string, cost: number, capacity: number, windowMs: number): TakeResult {
    const now = this.now();
    const held = this.budgets.get(key);
    const { result, points } = leak(held ? { points: held.points, at: held.at } : null, now, cost, capacity, windowMs);
    this.budgets.delete(key);
    this.budgets.set(key, { points, at: now, expiresAt: now + result.fullMs });
    while (this.budgets.size > this.maxKeys) this.budgets.delete(this.budgets.keys().next().value as string);
    return result;
  }

  /** Drop buckets with nothing left in their window, and budgets that are full again. */
  sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
    for (const [key, budget] of this.budgets) if (budget.expiresAt <= now) this.budgets.delete(key);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.entries.clear();
    this.budgets.clear();
  }
}
