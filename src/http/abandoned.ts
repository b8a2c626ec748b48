import type { IncomingMessage } from 'node:http';

/** The status a request its client abandoned is logged and counted as: nginx's 499, "client closed request". */
export const CLIENT_CLOSED_REQUEST = 499;

/**
 * Whether the client abandoned the request (docs/decisions.md §26): its body was cut off (the
 * connection closed before the body was complete), or its connection closed before the answer. Its
 * answer reaches nobody: whatever the app made of the broken request is the client's decision,
 * never a server error. `serverContext` is the Node adapter's (`req`); without one, never.
 */
export function abandoned(serverContext: unknown): boolean {
  const req = (serverContext as { req?: IncomingMessage } | null | undefined)?.req;
  if (!req) return false;
  return (req.destroyed && !req.complete) || req.socket?.destroyed === true;
}

/** The status an answer is logged and counted with: 499 when its client abandoned the request. */
export const statusOf = (status: number, serverContext: unknown): number => (abandoned(serverContext) ? CLIENT_CLOSED_REQUEST : status);
