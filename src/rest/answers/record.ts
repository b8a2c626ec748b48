import { fromHttpError, json, restErrorResponse } from '../errors.js';
import type { Respond } from './answer.js';

/** A record's ETag: its `updated_at`, which is also what If-Match hands back as expectedUpdatedAt. */
const etagOf = (updatedAt: string): string => `"${updatedAt}"`;

/**
 * The tag of an If-None-Match header that names `etag`, by weak comparison (RFC 9110 §13.1.2: a
 * `W/` on either side is ignored, so a tag from a compressed answer matches), or null; `*` names any.
 */
function matchingTag(header: string | null, etag: string): string | null {
  if (header === null) return null;
  if (header.trim() === '*') return etag;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').map((tag) => tag.trim()).find((tag) => opaque(tag) === etag) ?? null;
}

/**
 * 200 with `{data: <the record>}` and an ETag of its `updated_at`; unknown or not visible: one 404.
 * A GET whose If-None-Match names that version: 304 without a body (RFC 9110 §15.4.5), its ETag as
 * the client holds it, so a client or cache that kept the record reads nothing again
 * (docs/rest.md#records-by-id-beyond-the-contract). Other methods pass over If-None-Match.
 */
export const record: Respond<'record'> = ({ data, answer, request }) => {
  if (data == null) return restErrorResponse(fromHttpError('ROUTE_NOT_FOUND'));
  const version = answer.unversioned ? undefined : (data as { updated_at?: string }).updated_at;
  if (!version) return json(200, { data });
  const etag = etagOf(version);
  const held = request.method === 'GET' ? matchingTag(request.headers.get('if-none-match'), etag) : null;
  if (held) return new Response(null, { status: 304, headers: { ETag: held } });
  return json(200, { data }, { ETag: etag });
};
