/**
 * Answers coded as the request accepts (gzip or Brotli, docs/rest.md#compression): whole bodies of
 * MIN_COMPRESS_BYTES and more, streams (exports, SSE, multipart subscriptions) as they go, an event
 * flushed as it is written. Documents the service keeps (the OpenAPI document, Swagger UI's files,
 * GraphiQL's page) are coded once, at their first request, and kept. Runs last among the plugins:
 * every header is set by then.
 */
import { Readable } from 'node:stream';
import type { Plugin } from 'graphql-yoga';
import { compressBody, compressStream, isCompressible, isEventStream, MIN_COMPRESS_BYTES, negotiateCoding, type Coding } from '../http/compression.js';
import { Response } from '../http/response.js';

/** A kept document's codings, by its body (or path, for a file's bytes); a few at most (one OpenAPI document per host). */
const KEPT_MAX = 16;

type Options = {
  enabled: boolean;
  /** The answers that are documents kept as they are: coded once, then served from memory. */
  kept: (request: Request, url: URL, response: Response) => boolean;
};

export function useCompression({ enabled, kept }: Options): Plugin {
  // Keyed by the body string itself (a reference, not a copy: a key made by joining the coding to
  // GraphiQL's page was a second 17 MB string in the heap snapshot, BENCHMARKS.md "Memory (issue #76)").
  const codedOnce = new Map<string, Partial<Record<Coding, Promise<Buffer>>>>();
  const once = (key: string, body: string | Uint8Array, coding: Coding): Promise<Buffer> => {
    let codings = codedOnce.get(key);
    if (!codings) {
      if (codedOnce.size >= KEPT_MAX) codedOnce.delete(codedOnce.keys().next().value!);
      codedOnce.set(key, (codings = {}));
    }
    const coded = (codings[coding] ??= compressBody(body, coding, 'once'));
    coded.catch(() => delete codings[coding]); // tried again next time
    return coded;
  };

  return {
    onResponse: async ({ request, response, setResponse }) => {
      if (!enabled || response.status === 204 || response.status === 304 || response.status < 200) return;
      const { headers } = response;
      if (headers.has('content-encoding') || !isCompressible(headers.get('content-type'))) return;
      if (/\bno-transform\b/i.test(headers.get('cache-control') ?? '')) return;
      const body = wholeBody(response);
      if (body === null) return; // no body at all
      // From here the answer's bytes depend on Accept-Encoding, small or not: caches keep one per coding.
      headers.set('vary', headers.has('vary') ? `${headers.get('vary')}, Accept-Encoding` : 'Accept-Encoding');
      if (body !== undefined && byteLength(body) < MIN_COMPRESS_BYTES) return;
      const url = new URL(request.url);
      const isKept = body !== undefined && kept(request, url, response);
      // Kept documents are coded once at Brotli's better quality; an answer's, gzip costs the least CPU per byte saved.
      const coding = negotiateCoding(request.headers.get('accept-encoding'), isKept ? 'br' : 'gzip');
      if (!coding) return;
      headers.delete('content-length');
      headers.set('content-encoding', coding);
      // Another coding is another representation: its ETag is weak (RFC 9110 §8.8.3), which If-Match still takes (src/rest/read.ts).
      const etag = headers.get('etag');
      if (etag?.startsWith('"')) headers.set('etag', `W/${etag}`);
      const init = { status: response.status, statusText: response.statusText, headers };
      if (body !== undefined) {
        const coded = isKept ? await once(typeof body === 'string' ? body : url.pathname, body, coding) : await compressBody(body, coding);
        return setResponse(new Response(coded as unknown as BodyInit, init)); // a Buffer: written whole, with its Content-Length
      }
      const source = nodeReadable(response.body!);
      const encoder = compressStream(coding, isEventStream(headers.get('content-type')));
      // Either end closing closes the other: a client gone stops the export or the subscription.
      source.on('error', (error) => encoder.destroy(error));
      encoder.on('close', () => source.destroy());
      source.pipe(encoder);
      return setResponse(new Response(encoder as unknown as ReadableStream, init));
    },
  };
}

/**
 * The body when it is whole in memory (a string or bytes: how every JSON answer is built), undefined
 * for a stream, null for none. The fetch ponyfill keeps what it was given (`bodyInit`).
 */
function wholeBody(response: Response): string | Uint8Array | undefined | null {
  const init = (response as unknown as { bodyInit?: unknown }).bodyInit;
  if (typeof init === 'string' || init instanceof Uint8Array) return init;
  if (init instanceof ArrayBuffer) return new Uint8Array(init);
  return response.body === null ? null : undefined;
}

const byteLength = (body: string | Uint8Array) => (typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);

/** The ponyfill's body is a Node Readable under a proxy; another fetch's is a web stream. */
function nodeReadable(body: ReadableStream<Uint8Array>): Readable {
  const inner = (body as unknown as { readable?: unknown }).readable;
  return inner instanceof Readable ? inner : Readable.fromWeb(body as never);
}
