/** What a download needs from the HTTP exchange it answers. */
export type Exchange = {
  /** Aborted when the client goes away before the answer is complete. */
  signal: AbortSignal;
  /** Cuts the connection, the only honest end for a download that fails after its first bytes; false without one. */
  abort(): boolean;
  log(error: unknown): void;
};

/**
 * A file answer streamed from `body`. The first chunk is read before answering, so a failure before
 * any byte is sent is the usual error answer (500, or 503 when the database is down). A failure
 * later cuts the connection, so the client sees an incomplete transfer rather than a hang or a
 * silently short file; a client that goes away stops the queries behind the stream.
 */
export async function download(body: ReadableStream<Uint8Array>, type: string, fileName: string, exchange: Exchange): Promise<Response> {
  const reader = body.getReader();
  const first = await reader.read();
  const stop = () => void reader.cancel().catch(() => undefined);
  if (exchange.signal.aborted) stop();
  else exchange.signal.addEventListener('abort', stop, { once: true });
  const done = () => exchange.signal.removeEventListener('abort', stop);

  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      if (!first.done) return controller.enqueue(first.value);
      done();
      controller.close();
    },
    async pull(controller) {
      try {
        const next = await reader.read();
        if (!next.done) return controller.enqueue(next.value);
        done();
        controller.close();
      } catch (error) {
        done();
        if (exchange.signal.aborted) return controller.close(); // the client left: nobody to tell
        exchange.log(error);
        // Once the connection is cut, ending the stream quietly just lets the server finish up.
        if (exchange.abort()) controller.close();
        else controller.error(new Error('download failed'));
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(stream, {
    status: 200,
    headers: { 'Content-Type': type, 'Content-Disposition': `attachment; filename="${fileName}"` },
  });
}
