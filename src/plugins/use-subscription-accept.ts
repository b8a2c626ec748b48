/**
 * A subscription by HTTP streams (docs/graphql.md#subscriptions): Server-Sent Events
 * (`Accept: text/event-stream`, or anything `*\/*` or `text/*` covers) or Apollo's multipart protocol
 * (`multipart/mixed;subscriptionSpec=1.0`). Asked for as one JSON answer, Yoga would start it, spend
 * its rate limit, then answer 406 with an empty body. This refuses it before it starts, so nothing
 * runs and nothing is charged, with a documented error: `BAD_REQUEST`, HTTP 406, `Accept` naming the
 * streaming media types (src/errors.ts subscriptionNeedsStream). graphql-ws, which streams whatever
 * its upgrade's headers say, is not judged: only requests that came through Yoga's HTTP handling are.
 */
import { processRegularResult, type Plugin } from 'graphql-yoga';
import type { ExecutionResult } from 'graphql/index.js';
import type { Context } from '../context.js';
import { subscriptionNeedsStream } from '../errors.js';
import { acceptsSubscriptionSpec } from './use-multipart-subscriptions.js';

export function useSubscriptionAccept(): Plugin {
  const viaHttp = new WeakSet<Request>();
  const refusals = new WeakSet<object>(); // the errors, which masking and coding pass on as they are
  return {
    onParams: ({ request }) => void viaHttp.add(request),
    onSubscribe: ({ args, setResultAndStopExecution }) => {
      const { request } = args.contextValue as unknown as Context;
      if (!viaHttp.has(request) || streams(request.headers.get('accept'))) return;
      const refusal = subscriptionNeedsStream();
      refusals.add(refusal);
      setResultAndStopExecution({ errors: [refusal] });
    },
    // The refusal is JSON even for a client that accepts no JSON at all: it says what to send instead.
    onResultProcess: ({ result, resultProcessor, setResultProcessor }) => {
      if (!resultProcessor && isRefusal(result, refusals)) setResultProcessor(processRegularResult, 'application/json');
    },
  };
}

/** Whether an Accept header lets Yoga's SSE processor or the multipart plugin answer (Yoga's own matching). */
export function streams(accept: string | null): boolean {
  if (acceptsSubscriptionSpec(accept)) return true;
  return (accept || '*/*')
    .replace(/\s/g, '')
    .toLowerCase()
    .split(',')
    .some((range) => {
      const [type, ...params] = range.split(';');
      const charset = params.find((param) => param.startsWith('charset='));
      if (charset && charset !== 'charset=utf-8') return false; // Yoga answers utf-8 only
      return type === '*/*' || type === 'text/*' || type === 'text/event-stream';
    });
}

const isRefusal = (result: unknown, refusals: WeakSet<object>): boolean =>
  Array.isArray(result) ? result.some((r) => isRefusal(r, refusals)) : Boolean((result as ExecutionResult | null)?.errors?.some((e) => refusals.has(e)));
