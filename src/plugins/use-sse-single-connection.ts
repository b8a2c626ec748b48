/**
 * graphql-sse's single connection mode on /graphql (its distinct connections mode is Yoga's own SSE:
 * a POST with `Accept: text/event-stream`). PUT reserves a stream (signed-in callers only) and
 * answers its token; GET with the token opens it; a POST carrying the token runs an operation into
 * it (202); DELETE `?operationId=` stops one (docs/graphql.md#subscriptions).
 *
 * graphql-sse's handler speaks the protocol; each operation is run by Yoga itself, as a POST /graphql
 * with `Accept: text/event-stream` and the caller's own headers, so every rule, limit and mask of a
 * plain request applies. (@graphql-yoga/plugin-graphql-sse executes through `getEnveloped` and so
 * skips Yoga's request-level plugins: trusted documents, the cross-site rule, the Accept rule.)
 */
import { randomUUID } from 'node:crypto';
import type { ExecutionResult } from 'graphql/index.js';
import type { Plugin } from 'graphql-yoga';
import { TOKEN_HEADER_KEY, TOKEN_QUERY_KEY, type RequestParams } from 'graphql-sse';
import { createHandler } from 'graphql-sse/lib/use/fetch';
import type { ServerContext } from '../context.js';
import { MESSAGES } from '../errors.js';

type Run = (request: Request, server: ServerContext) => Promise<Response>;

/** A request of the single connection mode: a reservation, a stop, or anything naming a stream. */
const isSingleConnection = (request: Request, url: URL): boolean =>
  request.method === 'PUT' || request.method === 'DELETE' || request.headers.has(TOKEN_HEADER_KEY) || url.searchParams.has(TOKEN_QUERY_KEY);

export function useSseSingleConnection({ signedIn, run }: {
  signedIn: (request: Request, server: ServerContext) => Promise<boolean>;
  /** The app's own fetch: a request through every plugin. */
  run: Run;
}): Plugin<object, ServerContext> {
  let handler: (request: Request) => Promise<Response>;
  const servers = new WeakMap<Request, ServerContext>();
  return {
    onYogaInit() {
      handler = createHandler({
        // A token from crypto, not graphql-sse's Math.random: whoever holds it reads the stream.
        authenticate: async (req) => {
          const given = req.headers.get(TOKEN_HEADER_KEY) ?? new URL(req.url).searchParams.get(TOKEN_QUERY_KEY);
          if (given) return given;
          if (req.method === 'PUT' && !(await signedIn(req.raw, servers.get(req.raw) ?? {}))) {
            return [JSON.stringify({ errors: [{ message: MESSAGES.unauthorized, extensions: { code: 'UNAUTHENTICATED' } }] }), { status: 401, statusText: 'Unauthorized', headers: { 'content-type': 'application/json; charset=utf-8' } }];
          }
          return randomUUID();
        },
        onSubscribe: (req, params) => results(run, req.raw, params, servers.get(req.raw) ?? {}),
      });
    },
    onRequest({ request, url, endResponse, serverContext }) {
      if (url.pathname !== '/graphql' || !isSingleConnection(request, url)) return;
      servers.set(request, serverContext);
      return handler(request).then(endResponse);
    },
  };
}

/** The operation as Yoga answers a POST /graphql asking for a stream: each result it sends, in order. */
async function* results(run: Run, request: Request, params: RequestParams, server: ServerContext): AsyncGenerator<ExecutionResult> {
  const headers = new Headers(request.headers);
  headers.delete(TOKEN_HEADER_KEY);
  headers.delete('content-length');
  // Read here, not sent on: uncoded (the outer stream is coded for the client, src/plugins/use-compression.ts).
  headers.delete('accept-encoding');
  headers.set('accept', 'text/event-stream');
  headers.set('content-type', 'application/json');
  const url = new URL(request.url);
  url.search = '';
  const { query, variables, operationName, extensions } = params;
  const body = JSON.stringify({ query, variables, operationName, extensions: { ...extensions, operationId: undefined } });
  const response = await run(new Request(url, { method: 'POST', headers, body }), server);
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
    // Refused before it started (406, a bad body): Yoga's JSON answer is the one result.
    yield (await response.json()) as ExecutionResult;
    return;
  }
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  try {
    let buffered = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffered += value;
      let end: number;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        const lines = buffered.slice(0, end).split('\n');
        buffered = buffered.slice(end + 2);
        const event = lines.find((l) => l.startsWith('event:'))?.slice(6).trim();
        const data = lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
        if (event === 'complete') return;
        if (event === 'next' && data) yield JSON.parse(data) as ExecutionResult;
      }
    }
  } finally {
    await reader.cancel(); // the client stopped it (DELETE, or its stream closed): Yoga ends the subscription
  }
}
