import { notAJsonObject, payloadTooLarge, unsupportedMediaType } from '../errors.js';

/**
 * Reading a JSON request body: shared ground of both transports (REST and /graphql), so neither
 * imports the other's internals.
 */
export const MAX_BODY_BYTES = 1024 * 1024;
/** How much of an oversized body is read and dropped so the 413 reaches the client. */
const DRAIN_BYTES = 16 * MAX_BODY_BYTES;

/** What readJson gives for a body that is not UTF-8 JSON: a 400, reported once the resource is known. */
const NOT_JSON: unique symbol = Symbol('not JSON');

/** Reads a JSON object body: readJson, then the top level must be an object (else 400). */
export async function readJsonObject(request: Request): Promise<Record<string, unknown>> {
  return jsonObject(await readJson(request));
}

/**
 * Reads a JSON body: 415 unless the content type is JSON, 413 past 1 MiB (counted while reading,
 * whatever Content-Length claims). These are about the message, not its content, so they throw
 * (AppError); a body that does not parse is NOT_JSON, for jsonObject to refuse.
 */
export async function readJson(request: Request): Promise<unknown> {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json' && !/^application\/[\w.+-]+\+json$/.test(type)) throw unsupportedMediaType();
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) throw payloadTooLarge();

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
      throw payloadTooLarge();
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
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw notAJsonObject();
  return parsed as Record<string, unknown>;
}
