// docs/rest.md#compression: the choice of a coding, the types coded, and an event stream coded one event at a time.
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { isCompressible, negotiateCoding, type Coding } from '../../src/http/compression.js';
import { Response } from '../../src/http/response.js';
import { useCompression } from '../../src/plugins/use-compression.js';

describe('negotiateCoding', () => {
  it.each([
    ['gzip, br', 'gzip', 'gzip'],
    ['gzip, br', 'br', 'br'],
    ['gzip, deflate', 'br', 'gzip'],
    [' BR ;q=1 , gzip;q=0.8', 'gzip', 'br'],
    ['gzip;q=0.5, br;q=0.9', 'gzip', 'br'],
    ['br;q=0, gzip;q=0.1', 'br', 'gzip'],
    ['*', 'gzip', 'gzip'],
    ['*;q=0.5, gzip;q=0', 'gzip', 'br'],
    ['x-gzip', 'br', 'gzip'],
  ] as const)('%s (preferring %s on a tie) is %s', (header, prefer, coding) => {
    expect(negotiateCoding(header, prefer)).toBe(coding);
  });

  it.each([null, '', 'identity', 'deflate', 'gzip;q=0, br;q=0', '*;q=0', 'identity;q=1, gzip;q=0.5', 'gzip;q=abc'])('%s: the body as it is', (header) => {
    expect(negotiateCoding(header, 'gzip')).toBeNull();
  });
});

describe('isCompressible', () => {
  it.each(['application/json; charset=utf-8', 'text/csv', 'text/html', 'text/event-stream', 'application/graphql-response+json', 'application/problem+json', 'multipart/mixed; boundary="-"', 'text/javascript'])('%s is coded', (type) => {
    expect(isCompressible(type)).toBe(true);
  });
  it.each(['application/pdf', 'image/png', 'application/zip', 'application/octet-stream', null])('%s is not coded again', (type) => {
    expect(isCompressible(type)).toBe(false);
  });
});

/** An SSE answer whose events the test writes one at a time, passed through the plugin. */
async function codedEventStream(coding: Coding) {
  let push!: (text: string) => void;
  const source = new ReadableStream<Uint8Array>({ start: (controller) => void (push = (text) => controller.enqueue(new TextEncoder().encode(text))) });
  const response = new Response(source, { headers: { 'content-type': 'text/event-stream' } });
  let coded: Response | undefined;
  const request = new Request('http://localhost/graphql', { method: 'POST', headers: { 'accept-encoding': coding } });
  const plugin = useCompression({ enabled: true, kept: () => false });
  await plugin.onResponse!({ request, response, setResponse: (r: Response) => void (coded = r), serverContext: {}, fetchAPI: {} } as never);
  expect(coded!.headers.get('content-encoding')).toBe(coding);
  let received = '';
  const decoder = coding === 'gzip' ? createGunzip() : createBrotliDecompress();
  (coded!.body as unknown as Readable).pipe(decoder).on('data', (chunk: Buffer) => void (received += chunk.toString()));
  return { push, received: () => received };
}

describe('an event stream, coded', () => {
  it.each(['gzip', 'br'] as const)('in %s, each SSE event arrives before the next is written (flushed per event, never held)', async (coding) => {
    const stream = await codedEventStream(coding);
    for (const n of [1, 2, 3]) {
      const event = `event: next\ndata: {"n":${n}}\n\n`;
      stream.push(event);
      await vi.waitFor(() => expect(stream.received()).toContain(event), { timeout: 10_000, interval: 5 });
    }
  });
});
