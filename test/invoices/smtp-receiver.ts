import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** An SMTP refusal: the code and text the server answers the message's DATA with. */
export type Refusal = { code: number; message: string };

/**
 * A real SMTP server on loopback (the `smtp-server` package): every message's DATA is answered by
 * `answer` (by its 1-based attempt number; null accepts it), and accepted ones are parsed.
 */
export async function startSmtpReceiver() {
  const received: ParsedMail[] = [];
  let attempts = 0;
  let answer: (attempt: number) => Refusal | null = () => null;
  const waiters: { done: () => boolean; resolve: () => void }[] = [];
  const settle = () => {
    for (const w of waiters.splice(0)) (w.done() ? w.resolve() : waiters.push(w));
  };
  const server = new SMTPServer({
    // No TLS (no certificate a client would trust) and no login: plain SMTP on loopback.
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const refusal = answer(++attempts);
        if (refusal) {
          callback(Object.assign(new Error(refusal.message), { responseCode: refusal.code }));
          settle();
          return;
        }
        simpleParser(Buffer.concat(chunks)).then((mail) => {
          received.push(mail);
          callback();
          settle();
        }, callback);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    attempts: () => attempts,
    /** How the next messages are answered, from now on. */
    answerWith: (next: (attempt: number) => Refusal | null) => void (answer = next),
    /** Resolves once `done` holds (checked at every message). */
    until: (done: () => boolean) => (done() ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ done, resolve }))),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type SmtpReceiver = Awaited<ReturnType<typeof startSmtpReceiver>>;
