// Another tenant's list latency beside a background burst (bench:overdue, bench:workflows): one
// client paging, its requests timed one by one, summarised as p50 / p99 with the failures counted.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Server } from './processes.js';

/** Between list requests: one client paging, as the import bench times it. */
const LIST_GAP_MS = 10;

export type Latencies = { requests: number; failures: number; p50: number; p99: number };

/** GET `pathAndQuery` one request at a time until `done()`: each one's latency (NaN: failed). */
export async function listLatencies(server: Server, pathAndQuery: string, token: string, done: () => boolean, into: number[] = []): Promise<number[]> {
  while (!done()) {
    const started = performance.now();
    const response = await fetch(server.baseUrl + pathAndQuery, { headers: { authorization: `Bearer ${token}` } }).catch(() => null);
    await response?.arrayBuffer();
    into.push(response?.status === 200 ? performance.now() - started : NaN);
    await sleep(LIST_GAP_MS);
  }
  return into;
}

/** The latencies' p50 and p99 (failures left out of both, counted apart). */
export function summary(all: number[]): Latencies {
  const times = all.filter((t) => !Number.isNaN(t)).sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)] ?? NaN;
  return { requests: all.length, failures: all.length - times.length, p50: at(0.5), p99: at(0.99) };
}
