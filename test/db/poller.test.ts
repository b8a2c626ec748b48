// src/db/poller.ts: the loop every background worker runs (the events' relay, imports, the overdue jobs);
// src/events-runtime.ts `coalesced`: the wake-up NOTIFY after the service's own commits.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startPoller, type Poller } from '../../src/db/poller.js';
import { coalesced } from '../../src/events-runtime.js';

let poller: Poller | null = null;
beforeEach(() => vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] }));
afterEach(async () => {
  const closing = poller?.close();
  await vi.runAllTimersAsync();
  await closing;
  poller = null;
  vi.useRealTimers();
});

/** A poller whose steps record when they started; `more` says whether each found a whole batch. */
function recorded(opts: { pollMs: number; minGapMs?: number; more?: () => boolean }) {
  const starts: number[] = [];
  poller = startPoller({
    ...opts,
    step: async () => {
      starts.push(Date.now());
      return opts.more?.() ?? false;
    },
    onError: (err) => {
      throw err;
    },
  });
  return starts;
}

describe('the poller', () => {
  it('a stream of nudges runs one step per minGapMs, not one per nudge', async () => {
    const t0 = Date.now();
    const starts = recorded({ pollMs: 2_000, minGapMs: 10 });
    await vi.advanceTimersByTimeAsync(0);
    expect(starts).toEqual([t0]);
    // A commit every millisecond for 25 ms.
    for (let i = 0; i < 25; i++) {
      poller!.nudge();
      await vi.advanceTimersByTimeAsync(1);
    }
    expect(starts).toEqual([t0, t0 + 10, t0 + 20]);
  });

  it('a nudge after a quiet spell runs a step at once', async () => {
    const t0 = Date.now();
    const starts = recorded({ pollMs: 2_000, minGapMs: 10 });
    await vi.advanceTimersByTimeAsync(50);
    poller!.nudge();
    await vi.advanceTimersByTimeAsync(0);
    expect(starts).toEqual([t0, t0 + 50]);
  });

  it('without nudges it polls every pollMs; a whole batch runs the next step after minGapMs', async () => {
    const t0 = Date.now();
    let batches = 2;
    const starts = recorded({ pollMs: 1_000, minGapMs: 10, more: () => batches-- > 0 });
    await vi.advanceTimersByTimeAsync(2_100);
    expect(starts).toEqual([t0, t0 + 10, t0 + 20, t0 + 1_020, t0 + 2_020]);
  });
});

describe("the wake-up after a commit", () => {
  it('a stream of calls sends once per minGapMs, the first at once, and a send follows the last call', async () => {
    const t0 = Date.now();
    const sends: number[] = [];
    const wake = coalesced(async () => void sends.push(Date.now()), (err) => {
      throw err;
    }, 10);
    // A commit every millisecond for 25 ms.
    for (let i = 0; i < 25; i++) {
      wake();
      await vi.advanceTimersByTimeAsync(1);
    }
    await vi.advanceTimersByTimeAsync(100);
    await wake.idle();
    expect(sends).toEqual([t0, t0 + 10, t0 + 20, t0 + 30]);
    // Quiet since: the next call sends at once.
    wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(sends.at(-1)).toBe(Date.now());
  });
});
