/**
 * Requests Node's HTTP parser refuses get the contract's JSON error shape (docs/faults.md "Requests
 * Node refuses"), not Node's empty bodies: oversized headers 431, a malformed request 400.
 */
import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerClientErrors } from '../../src/http/client-error.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/** Sends raw bytes and reads the whole answer until the server closes. */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => void (text += d));
    socket.once('end', () => resolve(text));
    socket.once('error', reject);
    socket.write(bytes);
  });
}

const parse = (answer: string) => {
  const [head, body] = answer.split('\r\n\r\n');
  return { status: Number(head!.split(' ')[1]), head: head!.toLowerCase(), body: JSON.parse(body!) as unknown };
};

describe("Node's client errors", () => {
  let t: TestApp;
  let server: Server;
  let port: number;
  beforeAll(async () => {
    t = await createTestApp();
    server = createServer(t.app); // as src/main.ts builds it
    answerClientErrors(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await t?.close();
  });

  it('oversized headers are a 431 {"error":"Request header fields too large"} in JSON', async () => {
    const answer = parse(await raw(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`));
    expect(answer.status).toBe(431);
    expect(answer.head).toContain('content-type: application/json');
    expect(answer.body).toEqual({ error: 'Request header fields too large' });
  });

  it('a malformed request is a 400 {"error":"Bad request"} in JSON', async () => {
    const answer = parse(await raw(port, 'NOT A REQUEST\r\n\r\n'));
    expect(answer.status).toBe(400);
    expect(answer.head).toContain('content-type: application/json');
    expect(answer.body).toEqual({ error: 'Bad request' });
  });

  it('a well-formed request on the same server is still served', async () => {
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });
});
