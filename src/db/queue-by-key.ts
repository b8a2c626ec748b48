import { DatabaseUnavailableError } from './bounds.js';

/**
 * Writes that take the same transaction lock run one after another in this instance, before they ask
 * the pool for a connection. A write waiting on a database lock holds its pooled connection while it
 * waits: ten form submissions of one e-mail at once held ten connections (the whole pool) while one
 * worked, and every other request waited for the pool until it answered 503 (BENCHMARKS.md, "One
 * e-mail at a time"); invoices numbered in one account, and edits of one record, wait on a row the
 * same way. Queued here they hold nothing. A field names its lock as the `line` of its rules
 * (src/graphql/rules.ts). The database lock stays what serialises them across instances; this only
 * keeps one instance's pool from being spent on waiting.
 *
 * The wait in line is bounded like the lock wait it stands in for (statementTimeoutMs, then 503 as a
 * statement timeout), so a flood of one key is refused, not left hanging. A chain of promises per key
 * rather than a library (async-lock): that bound and the error it ends in are all it needs besides.
 */
export class KeyQueue {
  private readonly tails = new Map<string, Promise<void>>();

  constructor(private readonly maxWaitMs: number) {}

  /** Runs `work` once every earlier call with `key` has settled (with no key, at once). */
  run<T>(key: string | null, work: () => Promise<T>): Promise<T> {
    if (key === null) return work();
    const previous = this.tails.get(key) ?? Promise.resolve();
    let done!: () => void;
    const tail = new Promise<void>((resolve) => (done = resolve));
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return new Promise<T>((resolve, reject) => {
      let waiting = true;
      const timer = setTimeout(() => {
        waiting = false;
        reject(new DatabaseUnavailableError('57014', `no turn for this write within ${this.maxWaitMs} ms`));
      }, this.maxWaitMs);
      void previous.then(() => {
        if (!waiting) return done(); // refused meanwhile: the next in line goes on
        waiting = false;
        clearTimeout(timer);
        Promise.resolve().then(work).then(resolve, reject).finally(done);
      });
    });
  }
}
