import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';

/** The contract's error bodies for requests Node's HTTP parser refuses before the app sees them. */
const BODIES: Record<number, string> = {
  400: 'Bad request',
  408: 'Request timeout',
  413: 'Payload too large',
  431: 'Request header fields too large',
};

/** Node's parser error codes to a status; anything else it refuses is a 400. */
function statusOf(code: string | undefined): number {
  if (code === 'HPE_HEADER_OVERFLOW') return 431;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408;
  return 400;
}

/**
 * Node answers a request it cannot parse (oversized headers, malformed request line) with an empty
 * body of its own; this writes the contract's JSON error shape instead (docs/faults.md), then closes.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // Nothing to answer on a socket already gone, or whose reply has started.
    if (err.code === 'ECONNRESET' || !socket.writable || (socket as Duplex & { _httpMessage?: unknown })._httpMessage) {
      socket.destroy();
      return;
    }
    const status = statusOf(err.code);
    const body = JSON.stringify({ error: BODIES[status] });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n' +
        body,
    );
  });
}
