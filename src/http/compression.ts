/**
 * Content codings of answers (RFC 9110 §8.4.1, §12.5.3): which coding a request accepts, which answers
 * are worth coding, and the encoders. node:zlib does the coding (gzip and Brotli, whole or streaming,
 * off the event loop); the registry's packages that choose a coding (negotiator, the `compression`
 * middleware) work on Node's req/res, while the answers here are fetch Responses in Yoga's plugins
 * (src/plugins/use-compression.ts), and @whatwg-node/server's own plugin ignores q-values, sizes,
 * types and Vary and buffers event streams; so the choice is these few lines.
 */
import { promisify } from 'node:util';
import { brotliCompress, constants, createBrotliCompress, createGzip, gzip, type BrotliOptions, type ZlibOptions } from 'node:zlib';
import type { Transform } from 'node:stream';

export type Coding = 'br' | 'gzip';

/** Below this an answer goes as it is: a coded small body saves less than its headers and CPU cost. */
export const MIN_COMPRESS_BYTES = 1024;

/**
 * The coding to send, or null for the body as it is. The highest q-value among gzip and br wins (`*`
 * stands for the one not named, q=0 refuses it); on a tie `prefer` wins; identity wins only when
 * named with a higher q-value than both.
 */
export function negotiateCoding(header: string | null, prefer: Coding): Coding | null {
  if (!header) return null;
  const weights = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.split(';');
    const coding = name.trim().toLowerCase();
    if (!coding) continue;
    let q = 1;
    for (const param of params) {
      const value = /^\s*q\s*=\s*(\S*)\s*$/i.exec(param)?.[1];
      if (value !== undefined) q = Number(value);
    }
    weights.set(coding === 'x-gzip' ? 'gzip' : coding, Number.isFinite(q) && q >= 0 && q <= 1 ? q : 0);
  }
  const weightOf = (coding: string) => weights.get(coding) ?? weights.get('*') ?? 0;
  const other: Coding = prefer === 'br' ? 'gzip' : 'br';
  const best = weightOf(other) > weightOf(prefer) ? other : prefer;
  const q = weightOf(best);
  if (q <= 0) return null;
  return (weights.get('identity') ?? 0) > q ? null : best;
}

/**
 * Types that shrink when coded: text, JSON, XML, JavaScript, SVG, GraphQL's multipart. Not PDF, images or
 * archives, which are coded already.
 */
export function isCompressible(contentType: string | null): boolean {
  if (!contentType) return false;
  const type = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return type.startsWith('text/') || type === 'multipart/mixed' || type === 'image/svg+xml'
    || /^application\/(json|javascript|xml|graphql-response\+json|[\w.-]+\+(json|xml))$/.test(type);
}

/** Types whose every write is a message the client waits for (SSE, multipart subscriptions): flushed one by one. */
export function isEventStream(contentType: string | null): boolean {
  const type = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
  return type === 'text/event-stream' || type === 'multipart/mixed';
}

const gzipAsync = promisify<Buffer | Uint8Array | string, ZlibOptions, Buffer>(gzip);
const brotliAsync = promisify<Buffer | Uint8Array | string, BrotliOptions, Buffer>(brotliCompress);

/**
 * Per answer: gzip's default level and Brotli quality 4 (measured on the OpenAPI document, 766 KB:
 * gzip 7 ms to 37 KB, br q4 20 ms to 25 KB, br q9 260 ms, br q11 670 ms). Once, for a document kept
 * (`effort: 'once'`): gzip 9 and br q6, not 11 (GraphiQL's 9 MB page took 59 s at q11).
 */
const LEVELS = {
  answer: { gzip: 6, br: 4 },
  once: { gzip: 9, br: 6 },
} as const;

/** A whole body, coded in libuv's thread pool: the event loop goes on serving meanwhile. */
export function compressBody(body: string | Uint8Array, coding: Coding, effort: keyof typeof LEVELS = 'answer'): Promise<Buffer> {
  if (coding === 'gzip') return gzipAsync(body, { level: LEVELS[effort].gzip });
  const size = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
  return brotliAsync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: LEVELS[effort].br, [constants.BROTLI_PARAM_SIZE_HINT]: size } });
}

/**
 * A streaming encoder. `flushEachWrite`: every write comes out at once, whole (Z_SYNC_FLUSH,
 * BROTLI_OPERATION_FLUSH), so an event is never held back waiting for the next; else zlib sends
 * full blocks, which codes a long download better.
 */
export function compressStream(coding: Coding, flushEachWrite: boolean): Transform {
  if (coding === 'gzip') return createGzip({ level: LEVELS.answer.gzip, ...(flushEachWrite ? { flush: constants.Z_SYNC_FLUSH } : {}) });
  return createBrotliCompress({
    params: { [constants.BROTLI_PARAM_QUALITY]: LEVELS.answer.br },
    ...(flushEachWrite ? { flush: constants.BROTLI_OPERATION_FLUSH } : {}),
  });
}
