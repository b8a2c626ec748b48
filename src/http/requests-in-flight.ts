// The requests this process is answering, so that background work steps aside for them when they
// keep the process busy (docs/workflows.md#the-job-runner-and-why): a workflow run's step waits to
// start while requests have been in flight without a pause for a while, and goes on at the first
// quiet moment. One per process, as the event loop it guards is: every app of the process counts its
// requests here.
import { setImmediate as nextTurn } from 'node:timers/promises';

/** A request counted longer than this has been forgotten (an answer that never came): it holds nothing back. */
export const FORGOTTEN_MS = 30_000;

export class RequestsInFlight {
  private readonly started = new Map<symbol, number>();
  /** When the requests in flight began without a pause (null: none in flight). */
  private busySince: number | null = null;
  private readonly waiters = new Set<() => void>();

  /** A request begins: the function it returns ends it (once, however often called). */
  enter(): () => void {
    if (this.size === 0) this.busySince = performance.now();
    const id = Symbol('request');
    this.started.set(id, performance.now());
    return () => {
      if (this.started.delete(id) && this.started.size === 0) this.quieted();
    };
  }

  /** Requests in flight now (forgotten ones left out). */
  get size(): number {
    const since = performance.now() - FORGOTTEN_MS;
    for (const [id, at] of this.started) if (at < since) this.started.delete(id);
    if (this.started.size === 0 && this.busySince !== null) this.quieted();
    return this.started.size;
  }

  /** How long requests have been in flight without a moment with none (0 when none is). */
  busyForMs(): number {
    return this.size === 0 || this.busySince === null ? 0 : performance.now() - this.busySince;
  }

  /** Background work waiting for a quiet moment now. */
  get waiting(): number {
    return this.waiters.size;
  }

  /**
   * At once, unless requests have been in flight without a pause for `busyMs` or more (the process
   * is kept busy answering them); then once none is (a turn of the event loop after the last one
   * ended, so that its answer is written first), or after `atMostMs` however many there are:
   * background work under requests that never pause still goes on.
   */
  async quiet({ busyMs, atMostMs }: { busyMs: number; atMostMs: number }): Promise<void> {
    if (this.size === 0 || this.busyForMs() < busyMs) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, atMostMs);
      this.waiters.add(done);
    });
  }

  private quieted(): void {
    this.busySince = null;
    if (!this.waiters.size) return;
    void nextTurn().then(() => {
      if (this.started.size === 0) for (const done of [...this.waiters]) done();
    });
  }
}

export const requestsInFlight = new RequestsInFlight();
