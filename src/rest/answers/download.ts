import { fromCoreError, fromHttpError, restErrorResponse } from '../errors.js';
import type { AppError } from '../../errors.js';
import { download as stream } from '../download.js';
import type { Ticket } from '../downloads.js';
import type { Respond } from './answer.js';

/** A file streamed from the export ticket the operation answers; a by-id read's null (unknown or not visible): 404. */
export const download: Respond<'download'> = async ({ data, answer: { file }, ctx, request, serverContext, log }) => {
  if (data == null) return restErrorResponse(fromHttpError('ROUTE_NOT_FOUND'));
  const ticket = data as Ticket;
  // Text says its charset; a binary file (a PDF) has none.
  const type = file.mediaType.startsWith('text/') || file.mediaType.endsWith('json') ? `${file.mediaType}; charset=utf-8` : file.mediaType;
  let body: ReadableStream<Uint8Array>;
  try {
    body = await file.stream(ctx.reader, ticket, { db: ctx.db, pdfs: ctx.pdfs, log });
  } catch (error) {
    // The file cannot be made now (the PDF pool's queue is full, docs/decisions.md §26): 503 with Retry-After.
    if ((error as AppError).extensions?.code === 'SERVICE_UNAVAILABLE') return restErrorResponse(fromCoreError(error as AppError, 'query', (key) => key));
    throw error;
  }
  return stream(body, type, file.fileName?.(ticket) ?? ticket.fileName!, {
    signal: request.signal,
    abort: () => Boolean(serverContext.req?.socket.destroy()),
    log: (err: unknown) => log.error({ err, requestId: ctx.requestId }, 'REST download failed'),
  });
};
