import { fromHttpError, restErrorResponse } from '../errors.js';
import { download as stream } from '../download.js';
import type { Ticket } from '../downloads.js';
import type { Respond } from './answer.js';

/** A file streamed from the export ticket the operation answers; a by-id read's null (unknown or not visible): 404. */
export const download: Respond<'download'> = async ({ data, answer: { file }, ctx, request, serverContext, log }) => {
  if (data == null) return restErrorResponse(fromHttpError('ROUTE_NOT_FOUND'));
  const ticket = data as Ticket;
  // Text says its charset; a binary file (a PDF) has none.
  const type = file.mediaType.startsWith('text/') || file.mediaType.endsWith('json') ? `${file.mediaType}; charset=utf-8` : file.mediaType;
  return stream(await file.stream(ctx.reader, ticket), type, file.fileName?.(ticket) ?? ticket.fileName!, {
    signal: request.signal,
    abort: () => Boolean(serverContext.req?.socket.destroy()),
    log: (err: unknown) => log.error({ err, requestId: ctx.requestId }, 'REST download failed'),
  });
};
