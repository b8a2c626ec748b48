import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { guardedLookup, isBlockedAddress } from './target.js';
import type { TargetPolicy } from '../deps.js';

export const TIMEOUT_MS = 10_000;
export const MAX_READ_BYTES = 4096;

export type SendResult = { succeeded: boolean; statusCode: number | null; durationMs: number; error: string | null };

/**
 * One Standard Webhooks request (docs/events.md): signed with the `standardwebhooks` package, to an
 * address checked at connection time, 10 s in all, redirects not followed (a 3xx is a failure), at
 * most 4 KB of the answer read and nothing of it kept.
 */
export async function sendWebhook(
  target: { url: string; secrets: string[] },
  message: { id: string; body: string; at?: Date },
  policy: TargetPolicy,
  signal?: AbortSignal,
): Promise<SendResult> {
  const started = performance.now();
  const done = (statusCode: number | null, error: string | null): SendResult => ({
    succeeded: statusCode !== null && statusCode >= 200 && statusCode < 300,
    statusCode,
    durationMs: Math.round(performance.now() - started),
    error,
  });
  const url = new URL(target.url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // An address literal never goes through `lookup`: judge it here.
  if (!policy.allowPrivate && isIP(host) && isBlockedAddress(host)) return done(null, 'Target address not allowed');
  const at = message.at ?? new Date();
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'crm-billing-api-webhooks/1',
    'webhook-id': message.id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    // One `v1,<signature>` per secret, space-separated, as Standard Webhooks allows (a rotation's overlap).
    'webhook-signature': target.secrets.map((secret) => new Webhook(secret).sign(message.id, at, message.body)).join(' '),
  };
  const client = url.protocol === 'https:' ? https : http;
  const timeout = AbortSignal.timeout(TIMEOUT_MS);
  return new Promise<SendResult>((resolve) => {
    const request = client.request(url, {
      method: 'POST',
      headers,
      lookup: guardedLookup(policy) as never,
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      agent: false, // a fresh connection, so every request goes through the lookup above
    }, (response) => {
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= MAX_READ_BYTES) response.destroy(); // the status is all we need
      });
      const finish = () => resolve(done(response.statusCode ?? null, statusError(response.statusCode)));
      response.on('end', finish);
      response.on('close', finish);
      response.on('error', finish);
    });
    request.on('error', (err: NodeJS.ErrnoException) => {
      const reason = err.code === 'EBLOCKEDTARGET' ? 'Target address not allowed'
        : err.name === 'AbortError' || timeout.aborted ? `No answer within ${TIMEOUT_MS / 1000} s`
        : `Connection failed (${err.code ?? err.message})`;
      resolve(done(null, reason.slice(0, 500)));
    });
    request.end(message.body);
  });
}

const statusError = (status: number | undefined) =>
  status === undefined ? 'No status' : status >= 200 && status < 300 ? null : status >= 300 && status < 400 ? `Redirect (${status}) not followed` : `HTTP ${status}`;
