import { monitorEventLoopDelay, performance, type IntervalHistogram } from 'node:perf_hooks';

/**
 * How late this process's event loop has been running lately (perf_hooks' monitorEventLoopDelay),
 * so a timeout can tell a slow event loop from a slow peer: when the loop is stalled, a reply may sit
 * unread in the socket while the timer that should wait for it fires late (docs/faults.md).
 */
export class EventLoopWatch {
  private readonly histogram: IntervalHistogram;
  private readonly timer: NodeJS.Timeout;
  private previousMaxMs = 0;

  constructor(private readonly windowMs = 1_000) {
    this.histogram = monitorEventLoopDelay({ resolution: 10 });
    this.histogram.enable();
    // Two windows of history: the current one and the one before, so "lately" never reads as zero just after a reset.
    this.timer = setInterval(() => {
      this.previousMaxMs = this.histogram.max / 1e6;
      this.histogram.reset();
    }, this.windowMs);
    this.timer.unref();
  }

  /** The worst event-loop delay seen over the last one to two windows, in ms. */
  recentMaxMs(): number {
    return Math.max(this.previousMaxMs, this.histogram.max / 1e6);
  }

  close(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }
}

/**
 * Thrown by `loopAwareDeadline`: the peer did not answer within `ms` of running event loop, or
 * (`stalled`) the loop itself stayed stalled past `maxWaitMs`, which says nothing about the peer.
 */
export class PeerTimeout extends Error {
  constructor(
    ms: number,
    readonly stalled: boolean,
  ) {
    super(stalled ? `event loop stalled; no answer yet after ${ms} ms` : `no answer within ${ms} ms`);
    this.name = 'PeerTimeout';
  }
}

/**
 * `promise`, or PeerTimeout once it has gone unanswered for `ms` while the event loop was running.
 * A deadline reached while the loop was stalled (the timer fired late, or the loop's recent delay
 * exceeds `stallMs`) is not the peer's fault: the wait starts again, at most `maxWaitMs` in all.
 */
export function loopAwareDeadline<T>(promise: Promise<T>, ms: number, watch: EventLoopWatch, { stallMs = ms / 2, maxWaitMs = ms * 20 } = {}): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const start = performance.now();
    let due = start + ms;
    let timer: NodeJS.Timeout;
    const check = () => {
      const now = performance.now();
      const stalled = now - due > stallMs || watch.recentMaxMs() > stallMs;
      if (stalled && now - start < maxWaitMs) {
        due = now + ms;
        timer = setTimeout(check, ms);
        return;
      }
      reject(new PeerTimeout(ms, stalled));
    };
    timer = setTimeout(check, ms);
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error: unknown) => (clearTimeout(timer), reject(error)),
    );
  });
}
