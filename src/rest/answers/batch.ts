import { json } from '../errors.js';
import type { Respond } from './answer.js';

type BatchAnswer = { data: { index: number; status: string; id: string | null; data: unknown; details: unknown }[]; created: number; updated: number; unchanged: number; failed: number };

/**
 * 200 with the core's batch answer (its enums already as REST shows them: `failed`), each item with
 * its `id` and `data` (which the core gives only to a caller with the read scope), or its `details`,
 * refused records named by the reader (docs/decisions.md §16).
 */
export const batch: Respond<'batch'> = ({ data: answered, refusedItems }) => {
  const result = answered as BatchAnswer;
  const data = result.data.map(({ index, status, id, data: written, details: problems }) => {
    const details = refusedItems.get(index) ?? problems;
    if (refusedItems.has(index) && status !== 'failed') throw new Error(`batch: refused record ${index} was written`);
    if (details != null) return { index, status, details };
    return written == null ? { index, status, id } : { index, status, id, data: written };
  });
  return json(200, { data, created: result.created, updated: result.updated, unchanged: result.unchanged, failed: result.failed });
};
