// What one write has in flight, for telling later whether it committed when its connection broke
// (src/db/in-doubt.ts): the ids of the events it made and the backends its statements went to,
// noted where they are made and sent, in the write's async context.
import { AsyncLocalStorage } from 'node:async_hooks';

/** What one write has in flight: the ids of the events it made, and the backends (pids) its statements went to. */
export type InFlight = { eventIds: string[]; backends: Set<number> };
const inFlight = new AsyncLocalStorage<InFlight>();

/** Notes an event id for the write it is made in, if any. */
export const noteEventId = (id: string): void => void inFlight.getStore()?.eventIds.push(id);

/** Notes the backend a statement of the current write is sent to (src/db/bounds.ts); PGlite has none. */
export const noteBackend = (pid: number | undefined): void => void (pid && inFlight.getStore()?.backends.add(pid));

/** Runs `work` as one write, noting in `flight` what it sends where. */
export const inWrite = <T>(flight: InFlight, work: () => Promise<T>): Promise<T> => inFlight.run(flight, work);

export const newFlight = (): InFlight => ({ eventIds: [], backends: new Set() });

/**
 * `run`, which sends the statement of several writes at once (src/db/together.ts), in its own flight;
 * its backends are then noted for each of `writers` too, whose events it carries.
 */
export async function sharedFlight<T>(writers: readonly (InFlight | undefined)[], run: () => Promise<T>): Promise<T> {
  const shared = newFlight();
  try {
    return await inFlight.run(shared, run);
  } finally {
    for (const writer of writers) for (const pid of shared.backends) writer?.backends.add(pid);
  }
}

/** The write the caller is part of, if any. */
export const currentFlight = (): InFlight | undefined => inFlight.getStore();
