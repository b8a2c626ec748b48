/**
 * Apollo Client's HttpLink subscriptions: the multipart subscription protocol on POST /graphql
 * (`Accept: multipart/mixed;subscriptionSpec="1.0"`, docs/graphql.md#subscriptions). Yoga serves
 * multipart/mixed to @defer/@stream only and answers a subscription that asks for it 406 (its
 * multipart parts are incremental results, which Apollo does not read as subscription events). This
 * speaks the protocol Apollo does: each event a part `{"payload": <result>}`, `{}` as a heartbeat, a
 * failure mid-stream a last part `{"payload": null, "errors": [...]}`, then the closing delimiter.
 */
import type { ExecutionResult } from 'graphql/index.js';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from '../logger.js';
import { maskError, shownError, shownResult } from '../graphql/mask.js';

const CONTENT_TYPE = 'multipart/mixed;boundary="graphql";subscriptionSpec="1.0"';
/** Apollo's router beats every 5 s: proxies that cut idle connections see traffic. */
export const HEARTBEAT_MS = 5_000;

/** Whether an Accept header asks for the multipart subscription protocol (a parameter Yoga's own parsing drops). */
export function acceptsSubscriptionSpec(accept: string | null): boolean {
  return (accept ?? '').split(',').some((range) => {
    const [type, ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    return type === 'multipart/mixed' && params.some((param) => /^subscriptionspec\s*=\s*"?1\.0"?$/.test(param));
  });
}

export function useMultipartSubscriptions(log: Logger): Plugin {
  return {
    onResultProcess: ({ request, result, resultProcessor, setResultProcessor }) => {
      // A client that also accepts SSE has it already; a failure before the stream (no access) stays JSON.
      if (resultProcessor || !isAsyncIterable(result) || !acceptsSubscriptionSpec(request.headers.get('accept'))) return;
      setResultProcessor((events, fetchAPI) => {
        const body = multipartBody(events as AsyncIterable<ExecutionResult>, fetchAPI.ReadableStream, log);
        return new fetchAPI.Response(body, { status: 200, headers: { 'Content-Type': CONTENT_TYPE } });
      }, 'multipart/mixed');
    },
  };
}

function multipartBody(events: AsyncIterable<ExecutionResult>, Stream: typeof ReadableStream, log: Logger): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const part = (json: unknown) => encoder.encode(`\r\nContent-Type: application/json; charset=utf-8\r\n\r\n${JSON.stringify(json)}\r\n--graphql`);
  const iterator = events[Symbol.asyncIterator]();
  let heartbeat: NodeJS.Timeout | undefined;
  return new Stream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode('\r\n--graphql'));
      heartbeat = setInterval(() => {
        if ((controller.desiredSize ?? 0) > 0) controller.enqueue(part({}));
      }, HEARTBEAT_MS);
    },
    async pull(controller) {
      try {
        const next = await iterator.next();
        if (!next.done) return controller.enqueue(part({ payload: shownResult(next.value, log) }));
      } catch (error) {
        controller.enqueue(part({ payload: null, errors: [shownError(maskError(error, log))] }));
      }
      clearInterval(heartbeat);
      controller.enqueue(encoder.encode('--\r\n'));
      controller.close();
    },
    async cancel() {
      clearInterval(heartbeat); // the client went away: the subscription's source is released
      await iterator.return?.();
    },
  });
}

const isAsyncIterable = (value: unknown): value is AsyncIterable<unknown> =>
  typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
