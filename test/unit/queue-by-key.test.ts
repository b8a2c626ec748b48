import { afterEach, describe, expect, it, vi } from 'vitest';
import { DatabaseUnavailableError } from '../../src/db/bounds.js';
import { isDatabaseUnavailable } from '../../src/db/unavailable.js';
import { KeyQueue } from '../../src/db/queue-by-key.js';

/** A promise settled from outside, and whether its work has started. */
function step<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  const s = { started: false, resolve, reject, work: () => ((s.started = true), promise) };
  return s;
}

/** Lets every callback already queued run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('KeyQueue (src/db/queue-by-key.ts)', () => {
  const queue = new KeyQueue(60_000);
  afterEach(() => void vi.useRealTimers());

  it('runs calls with one key one after another, in the order they came', async () => {
    const [a, b, c] = [step<string>(), step<string>(), step<string>()];
    const results = [queue.run('k1', a.work), queue.run('k1', b.work), queue.run('k1', c.work)];
    await settle();
    expect([a.started, b.started, c.started]).toEqual([true, false, false]);
    a.resolve('a');
    await settle();
    expect([b.started, c.started]).toEqual([true, false]);
    b.resolve('b');
    await settle();
    expect(c.started).toBe(true);
    c.resolve('c');
    expect(await Promise.all(results)).toEqual(['a', 'b', 'c']);
  });

  it('a call that fails lets the next one run, and only its own caller sees the failure', async () => {
    const [a, b] = [step(), step<string>()];
    const first = queue.run('k2', a.work);
    const second = queue.run('k2', b.work);
    a.reject(new Error('refused'));
    await expect(first).rejects.toThrow('refused');
    await settle();
    expect(b.started).toBe(true);
    b.resolve('b');
    expect(await second).toBe('b');
  });

  it('calls with other keys, or no key, do not wait', async () => {
    const [a, b, c] = [step(), step(), step()];
    void queue.run('k3', a.work);
    void queue.run('k4', b.work);
    void queue.run(null, c.work);
    await settle();
    expect([a.started, b.started, c.started]).toEqual([true, true, true]);
    [a, b, c].forEach((s) => s.resolve());
  });

  it('a call kept waiting past its bound is refused as unavailable (503) and never runs; the one after it still gets its turn', async () => {
    vi.useFakeTimers();
    const short = new KeyQueue(2_000);
    const [a, b, c] = [step(), step(), step<string>()];
    void short.run('k6', a.work);
    const refused = short.run('k6', b.work);
    const third = short.run('k6', c.work).catch((error: unknown) => error);
    const caught = refused.catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(2_000);
    const error = await caught;
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect(isDatabaseUnavailable(error)).toBe(true);
    expect(await third).toBeInstanceOf(DatabaseUnavailableError); // it waited as long
    a.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect([b.started, c.started]).toEqual([false, false]);
    const fresh = step<string>();
    const next = short.run('k6', fresh.work);
    await vi.advanceTimersByTimeAsync(0);
    expect(fresh.started).toBe(true);
    fresh.resolve('ran');
    expect(await next).toBe('ran');
  });
});
