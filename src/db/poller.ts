/** A background poll loop, started once per worker: `nudge` wakes it early, `close` ends it. */
export type Poller = { nudge(): void; close(): Promise<void> };

export type PollerOptions = {
  /**
   * One bounded batch of the worker's work; answers true when it took a whole batch, so that more
   * may be waiting. `running()` turns false once close() is called: a batch that loops checks it.
   */
  step: (running: () => boolean) => Promise<boolean | void>;
  /** The wait between two steps when there is nothing to do: the poll. */
  pollMs: number;
  /** The least time from one step's start to the next when more is waiting or a nudge came (a stream of commits). */
  minGapMs?: number;
  /** A step that threw while running; the next poll tries again. */
  onError: (err: unknown) => void;
};

/**
 * Runs `step` now, then again after each wait, until closed. Every worker uses it (the events',
 * the imports', the overdue jobs'); each step claims its own rows (FOR UPDATE SKIP LOCKED or an
 * advisory lock), so instances share the work and a restart only resumes it. close() resolves once
 * the step under way has finished, its queries with it, and leaves no timer behind.
 */
export function startPoller(options: PollerOptions): Poller {
  let running = true;
  let wake: (() => void) | null = null;
  // Set by a nudge that came while a step ran: what it announced may have committed after the step looked.
  let nudged = false;
  const loop = (async () => {
    while (running) {
      nudged = false;
      const started = Date.now();
      let more = false;
      try {
        more = (await options.step(() => running)) === true;
      } catch (err) {
        if (running) options.onError(err);
      }
      if (!running) break;
      // Under a stream of nudges or a backlog, one step per minGapMs at most (a nudge during the wait
      // too: each commit of a stream would otherwise run a step of its own); the poll only when idle.
      const gapLeft = () => Math.max(0, (options.minGapMs ?? 0) - (Date.now() - started));
      const soon = nudged || more;
      await new Promise<void>((resolve) => {
        let timer = setTimeout(done, soon ? gapLeft() : options.pollMs);
        timer.unref();
        function done() {
          clearTimeout(timer);
          wake = null;
          resolve();
        }
        wake = soon
          ? null
          : () => {
              wake = null;
              clearTimeout(timer);
              if (!running || gapLeft() === 0) return done();
              timer = setTimeout(done, gapLeft());
              timer.unref();
            };
      });
    }
  })();
  return {
    nudge: () => {
      nudged = true;
      wake?.();
    },
    close: async () => {
      running = false;
      wake?.();
      await loop;
    },
  };
}
