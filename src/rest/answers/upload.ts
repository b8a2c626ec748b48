// 202 Accepted for a POST of a file (docs/imports.md#intake): the route's operation begins the work once the file's
// header row is in (so the core judges the columns), the rows are stored as they arrive, and the
// route's `queue` mutation hands the stored file on and answers it (with Idempotency-Key, a retry's
// answer is the first upload's: docs/imports.md#retries). REST decides nothing here: the refusals
// are the core's (the operations) or the body's own (not UTF-8, empty, too large: src/imports/intake.ts).
import type { Response } from '../../http/response.js';
import type { GraphQLError } from 'graphql/index.js';
import type { Context } from '../../context.js';
import type { Database } from '../../db/client.js';
import { isAppError } from '../../errors.js';
import { readIdempotencyKey } from '../../idempotency/idempotency.service.js';
import { dropImport } from '../../imports/import.service.js';
import { receiveCsv, type Pace, type Staged } from '../../imports/intake.js';
import { releaseUpload } from '../../ratelimit/upload-slots.js';
import { fromCoreError, json, restErrorResponse } from '../errors.js';
import { restEnumsOf } from '../json-schema.js';
import type { Route } from '../routes.js';
import { schema } from '../../schema.js';

type Execute = (document: Route['operation'], variables: Record<string, unknown>) => Promise<{ data?: Record<string, any> | null; errors?: readonly GraphQLError[] }>;

/** A refusal of an operation while the body was being read: carried out of the stream as it is. */
class Refused extends Error {
  constructor(readonly error: GraphQLError) {
    super(error.message);
  }
}

/** The answer of an operation's one root field, or its refusal. */
function answerOf<T>(result: Awaited<ReturnType<Execute>>): T {
  if (result.errors?.length) throw new Refused(result.errors.find((e) => e.extensions?.code) ?? result.errors[0]!);
  return Object.values(result.data ?? {})[0] as T;
}

/** What an upload is accepted with: its route and query variables, and how its operations run. */
export type Accepting = {
  route: Route & { answer: { kind: 'upload' } };
  variables: Record<string, unknown>;
  ctx: Context;
  db: Database;
  execute: Execute;
  renameField: (key: string) => string;
  /** The query string's names: a refusal naming only them is "Invalid query". */
  queryParams: string[];
  pace: Pace;
  /** Aborted when the client gives the upload up before its body is complete. */
  gone: AbortSignal;
  /** Wakes this instance's import worker. */
  nudge?: () => void;
};

/** 202 with the queued job and its Location, or the refusal of the upload. */
export async function acceptUpload({ route, variables, ctx, db, execute, renameField, queryParams, pace, gone, nudge }: Accepting): Promise<Response> {
  let staged: Staged | null = null;
  // A problem with a query parameter is "Invalid query"; with the file (its columns) "Invalid payload".
  // `mapping.<column>` names a column of the file as the file spells it: kept as it is, and the file's.
  const ofFile = (key: string) => key.startsWith('mapping.');
  const restName = (key: string) => (ofFile(key) ? key : renameField(key));
  const sourceOf = (error: GraphQLError) => {
    const keys = Object.keys((error.extensions?.details as object) ?? {});
    return keys.length > 0 && keys.every((k) => !ofFile(k) && queryParams.includes(renameField(k).split('.')[0]!)) ? 'query' : 'body';
  };
  try {
    // The key's form is the core's rule (queueImport checks it again), judged before the file is read.
    readIdempotencyKey(ctx.request.headers);
    // Admitted from the headers before a byte of the body is read: access, scopes, limits and a place
    // among the uploads under way (docs/imports.md#intake).
    const fileName = ctx.request.headers.get('x-file-name');
    answerOf(await execute(route.answer.admit, { ...variables, ...(fileName ? { fileName } : {}) }));
    const given = { delimiter: variables.delimiter as string | undefined, encoding: variables.encoding as string | undefined };
    const received = await receiveCsv(db, ctx.request, async (headers, { delimiter }) => {
      const begun = answerOf<{ id: string; accountId: string }>(await execute(route.operation, { ...variables, columns: headers, delimiter, ...(fileName ? { fileName } : {}) }));
      staged = { importId: begun.id, accountId: begun.accountId };
      return staged;
    }, pace, gone, given);
    const answer = answerOf<{ id: string }>(await execute(route.answer.queue, { id: received.importId, fileSha256: received.sha256 }));
    // This instance's worker is woken once the answer is read, so that the answer shows the import
    // queued; another instance's worker, polling, may still have claimed it (then: running).
    nudge?.();
    const data = restEnumsOf(schema, route.answer.queue, answer);
    return json(202, { data }, { Location: route.answer.location.replace(':id', encodeURIComponent(answer.id)) });
  } catch (error) {
    // The file was refused after the import began: nothing of it stays.
    const begun = staged as Staged | null;
    if (begun) await dropImport(ctx.db, begun.importId);
    if (error instanceof Refused) return restErrorResponse(fromCoreError(error.error, sourceOf(error.error), restName));
    if (isAppError(error)) return restErrorResponse(fromCoreError(error, 'body', restName));
    throw error;
  } finally {
    await releaseUpload(ctx.request);
  }
}
