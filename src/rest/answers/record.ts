import { fromHttpError, json, restErrorResponse } from '../errors.js';
import type { Respond } from './answer.js';

/** A record's ETag: its `updated_at`, which is also what If-Match hands back as expectedUpdatedAt. */
const etagOf = (updatedAt: string): string => `"${updatedAt}"`;

/** 200 with `{data: <the record>}` and an ETag of its `updated_at`; unknown or not visible: one 404. */
export const record: Respond<'record'> = ({ data }) => {
  if (data == null) return restErrorResponse(fromHttpError('ROUTE_NOT_FOUND'));
  const version = (data as { updated_at?: string }).updated_at;
  return json(200, { data }, version ? { ETag: etagOf(version) } : {});
};
