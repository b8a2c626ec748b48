import { fromHttpError, invalidInput, type RestError } from './errors.js';

export const MAX_BODY_BYTES = 1024 * 1024;
/** How much of an oversized body is read and dropped so the 413 reaches the client. */
const DRAIN_BYTES = 16 * MAX_BODY_BYTES;

/** A refusal decided before any operation runs; carries the contract's answer. */
export class RestRefusal extends Error {
  constructor(readonly refusal: RestError) {
    super(refusal.body.error);
  }
}

const notAnObject = () => new RestRefusal(invalidInput('body', { body: ['Expected a JSON object'] }));

/** What readJson gives for a body that is not UTF-8 JSON: a 400, reported once the resource is known. */
const NOT_JSON: unique symbol = Symbol('not JSON');

/** Reads a JSON object body: readJson, then the top level must be an object (else 400). */
export async function readJsonObject(request: Request): Promise<Record<string, unknown>> {
  return jsonObject(await readJson(request));
}

/**
 * Reads a JSON body: 415 unless the content type is JSON, 413 past 1 MiB (counted while reading,
 * whatever Content-Length claims). These are about the message, not its content, so they throw;
 * a body that does not parse is NOT_JSON, for jsonObject to refuse.
 */
export async function readJson(request: Request): Promise<unknown> {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json' && !/^application\/[\w.+-]+\+json$/.test(type)) {
    throw new RestRefusal(fromHttpError('UNSUPPORTED_MEDIA_TYPE'));
  }
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) throw new RestRefusal(fromHttpError('PAYLOAD_TOO_LARGE'));

  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body?.getReader();
  for (let next = await reader?.read(); reader && next && !next.done; next = await reader.read()) {
    size += next.value.byteLength;
    if (size > MAX_BODY_BYTES) {
      // Read the rest before answering: cancelling the body resets the connection, and the client
      // would see ECONNRESET instead of the 413. Past DRAIN_BYTES, reset it after all.
      while (size <= DRAIN_BYTES && !(next = await reader.read()).done) size += next.value.byteLength;
      if (size > DRAIN_BYTES) await reader.cancel().catch(() => undefined);
      throw new RestRefusal(fromHttpError('PAYLOAD_TOO_LARGE'));
    }
    chunks.push(next.value);
  }
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks))) as unknown;
  } catch {
    return NOT_JSON;
  }
}

/** The body as a JSON object, or the 400 `details.body` ["Expected a JSON object"]. */
export function jsonObject(parsed: unknown): Record<string, unknown> {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw notAnObject();
  return parsed as Record<string, unknown>;
}
