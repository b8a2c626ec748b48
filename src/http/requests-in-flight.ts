// The requests this process is answering, so that background work steps aside for them
// (docs/workflows.md#the-job-runner-and-why): a workflow run's step waits to start while a request
// is in flight, and a request then has the event loop, the pool and the cores to itself but for the
// step already under way. One per process, as the event loop it guards is: every app of the process
// counts its requests here.
import { setImmediate as nextTurn } from 'node:timers/promises';

/** A request counted longer than this has been forgotten (an answer that never came): it holds nothing back. */
export const FORGOTTEN_MS = 30_000;

export class RequestsInFlight {
  private readonly started = new Map<symbol, number>();
  private readonly waiters = new Set<() => void>();

  /** A request begins: the function it returns ends it (once, however often called). */
  enter(): () => void {
    const id = Symbol('request');
    this.started.set(id, performance.now());
    return () => {
      if (this.started.delete(id) && this.started.size === 0) this.wake();
    };
  }

  /** Requests in flight now (forgotten ones left out). */
  get size(): number {
    const since = performance.now() - FORGOTTEN_MS;
    for (const [id, at] of this.started) if (at < since) this.started.delete(id);
    return this.started.size;
  }

  /** Background work waiting for a quiet moment now. */
  get waiting(): number {
    return this.waiters.size;
  }

  /**
   * Resolves once no request is in flight (a turn of the event loop after the last one ended, so that
   * its answer is written first), or after `atMostMs` however many there are: background work under a
   * stream of requests still goes on, a step at most every `atMostMs`.
   */
  async quiet(atMostMs: number): Promise<void> {
    if (this.size === 0) return;
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

  private wake(): void {
    if (!this.waiters.size) return;
    void nextTurn().then(() => {
      if (this.size === 0) for (const done of [...this.waiters]) done();
    });
  }
}

export const requestsInFlight = new RequestsInFlight();
