// Per-item work of a large set (an import's chunk of 1,000 rows) in slices, handing the event loop
// back between them: validating and planning 1,000 rows synchronously held every request of the
// instance for 100 ms and more (docs/imports.md#the-worker). A set of up to SLICE items (every
// API batch: at most 100) runs in one go, as before.
import { setImmediate as nextTurn } from 'node:timers/promises';

export const SLICE = 100;

/** `items.map(work)`, pausing for the event loop after every SLICE items. */
export async function mapInSlices<T, R>(items: readonly T[], work: (item: T, index: number) => R): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  for (let i = 0; i < items.length; i++) {
    if (i > 0 && i % SLICE === 0) await nextTurn();
    out[i] = work(items[i]!, i);
  }
  return out;
}
