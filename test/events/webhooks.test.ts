// docs/events.md "Webhooks" and docs/decisions.md §13: endpoints, signatures, retries, the SSRF guard.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { claimDue, deliverClaimed, retryDelay } from '../../src/webhooks/delivery.service.js';
import { sendWebhook } from '../../src/webhooks/send.js';
import { isBlockedAddress, targetProblem } from '../../src/webhooks/target.js';
import { createAccount, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { startReceiver } from './receiver.js';

const FAST = { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_BASE_MS: '40', EVENT_POLL_MS: '30' };
const CREATE = `mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { endpoint { id url eventTypes enabled } secret } }`;

let t: TestApp; // loopback receivers allowed, a worker delivering
let guarded: TestApp; // production-like: private targets refused
let acc: TestAccount;

beforeAll(async () => {
  [t, guarded] = await Promise.all([createTestApp({ env: FAST, worker: true }), createTestApp()]);
  acc = await createAccount(t);
});
afterAll(async () => {
  await t?.close();
  await guarded?.close();
});

async function endpoint(app: TestApp, account: TestAccount, url: string, eventTypes = ['*']) {
  const r = await app.gql(CREATE, { input: { accountId: account.id, url, eventTypes } }, { as: account.owner });
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data.createWebhookEndpoint as { endpoint: { id: string }; secret: string };
}
const newContact = (account: TestAccount, as: TestUser = account.member) =>
  t.gql('mutation ($i: CreateContactInput!) { createContact(input: $i) { id } }', { i: { accountId: account.id, firstName: unique('Hook') } }, { as });

describe('webhook endpoints', () => {
  it('the secret is shown once, stored only sealed, and never listed', async () => {
    const { endpoint: ep, secret } = await endpoint(t, acc, 'http://127.0.0.1:9/x', ['contact.created', 'contact.created']);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const row = await t.db.webhookEndpoint.findUniqueOrThrow({ where: { id: ep.id } });
    expect(row.eventTypes).toEqual(['contact.created']);
    expect(row.secretCiphertext).not.toContain(secret.slice(6, 20));
    expect(t.deps.events.box!.open(row.secretCiphertext, ep.id)).toBe(secret);
    expect(() => t.deps.events.box!.open(row.secretCiphertext, 'another-row')).toThrow();
    const listed = await t.gql('query ($id: ID!) { account(id: $id) { webhookEndpoints { id url enabled } } }', { id: acc.id }, { as: acc.owner });
    expect(JSON.stringify(listed.data)).not.toContain('whsec_');
    const asMember = await t.gql('query ($id: ID!) { account(id: $id) { webhookEndpoints { id } } }', { id: acc.id }, { as: acc.member });
    expect(asMember.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    await t.gql('mutation ($id: ID!) { deleteWebhookEndpoint(id: $id) { id } }', { id: ep.id }, { as: acc.owner });
  });

  it('an unknown event type and an empty list are 400 on eventTypes', async () => {
    const r = await t.gql(CREATE, { input: { accountId: acc.id, url: 'https://93.184.215.14/', eventTypes: ['contact.exploded'] } }, { as: acc.owner });
    expect(r.errors?.[0]?.extensions?.details).toMatchObject({ 'eventTypes.0': ['Unknown event type (docs/events.md lists them)'] });
  });
});

describe('the SSRF guard', () => {
  it.each([
    'http://127.0.0.1/hook', 'http://10.0.0.1/hook', 'http://169.254.169.254/latest/meta-data', 'http://[::1]/hook',
    'http://[::ffff:127.0.0.1]/hook', 'http://100.64.0.1/', 'http://[fe80::1]/', 'http://224.0.0.1/', 'http://0.0.0.0/', 'http://localhost:8080/hook',
  ])('%s is refused when saved', async (url) => {
    const owner = await createAccount(guarded);
    const r = await guarded.gql(CREATE, { input: { accountId: owner.id, url, eventTypes: ['*'] } }, { as: owner.owner });
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(r.errors![0]!.extensions!.details!.url![0]).toMatch(/private, loopback|resolves/);
  });

  it('credentials in the URL and other schemes are refused', async () => {
    const policy = { production: true, allowPrivate: false };
    expect(await targetProblem('https://user:pw@93.184.215.14/', policy)).toBe('Must not contain credentials');
    expect(await targetProblem('http://93.184.215.14/', policy)).toBe('Must be an https URL');
    expect(await targetProblem('ftp://93.184.215.14/', { production: false, allowPrivate: false })).toBe('Must be an http or https URL');
  });

  it('knows the ranges, IPv4-mapped and IPv4-compatible IPv6 included', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.31.0.1', '192.168.1.1', '100.127.0.1', '169.254.169.254', '::1', '::ffff:10.0.0.1', '::ffff:7f00:1', '::127.0.0.1', '::a9fe:a9fe', 'fd00::1', 'ff02::1', '64:ff9b::a00:1']) {
      expect(isBlockedAddress(a), a).toBe(true);
    }
    for (const a of ['93.184.215.14', '8.8.8.8', '2606:4700::1111']) expect(isBlockedAddress(a), a).toBe(false);
  });

  it('is checked again at connection time: a name resolving to loopback is never connected to', async () => {
    const receiver = await startReceiver();
    const port = new URL(receiver.url).port;
    const result = await sendWebhook({ url: `http://localhost:${port}/hook`, secrets: ['whsec_' + Buffer.alloc(32).toString('base64')] },
      { id: 'msg_1', body: '{}' }, { production: false, allowPrivate: false });
    expect(result).toMatchObject({ succeeded: false, statusCode: null, error: 'Target address not allowed' });
    expect(receiver.received).toHaveLength(0);
    await receiver.close();
  });
});

describe('delivery', () => {
  it('every delivered request verifies with the Standard Webhooks library and carries the envelope', async () => {
    const account = await createAccount(t);
    const receiver = await startReceiver();
    const { secret } = await endpoint(t, account, receiver.url, ['contact.created']);
    const contact = (await newContact(account)).data.createContact;
    await receiver.waitFor(1);
    const [request] = receiver.received;
    const payload = new Webhook(secret).verify(request!.body, request!.headers as Record<string, string>) as any;
    expect(payload).toMatchObject({ type: 'contact.created', account_id: account.id, actor: { type: 'user', id: account.member.id }, data: { object: { id: contact.id } } });
    expect(request!.headers['webhook-id']).toBe(payload.id);
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(request!.body, request!.headers as Record<string, string>)).toThrow();
    await receiver.close();
  });

  it('a receiver failing 3 times then recovering gets the event on the 4th attempt with the same webhook-id', async () => {
    const account = await createAccount(t);
    const receiver = await startReceiver((n) => (n <= 3 ? 500 : 200));
    const { endpoint: ep, secret } = await endpoint(t, account, receiver.url, ['contact.created']);
    await newContact(account);
    await receiver.waitFor(4);
    const ids = receiver.received.map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(1);
    for (const r of receiver.received) new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
    await expect.poll(() => t.db.webhookDelivery.count({ where: { endpointId: ep.id } })).toBe(4);
    const log = await t.gql('query ($id: ID!) { account(id: $id) { webhookEndpoints { deliveries(first: 10) { nodes { attempt statusCode succeeded error } } } } }', { id: account.id }, { as: account.owner });
    expect(log.data.account.webhookEndpoints[0].deliveries.nodes).toEqual([
      { attempt: 4, statusCode: 200, succeeded: true, error: null },
      { attempt: 3, statusCode: 500, succeeded: false, error: 'HTTP 500' },
      { attempt: 2, statusCode: 500, succeeded: false, error: 'HTTP 500' },
      { attempt: 1, statusCode: 500, succeeded: false, error: 'HTTP 500' },
    ]);
    expect((await t.db.webhookEndpoint.findUniqueOrThrow({ where: { id: ep.id } })).failingSince).toBeNull();
    await receiver.close();
  });

  it('retries back off exponentially with jitter, capped at 12 hours', () => {
    expect([1, 2, 3, 4].map((n) => retryDelay(n, 30_000, () => 1))).toEqual([30_000, 120_000, 480_000, 1_920_000]);
    expect(retryDelay(2, 30_000, () => 0)).toBe(60_000);
    expect(retryDelay(20, 30_000, () => 1)).toBe(12 * 3600_000);
  });

  it('workers of several instances deliver each event once per attempt (no double claims)', async () => {
    const account = await createAccount(t);
    const receiver = await startReceiver();
    await endpoint(t, account, receiver.url, ['contact.created']);
    // Two more "instances" claiming from the same database as the app's own worker.
    const options = { box: t.deps.events.box!, policy: t.deps.events.policy, retryBaseMs: 40, leaseMs: 60_000, log: t.deps.log };
    let running = true;
    const others = [0, 1].map(async () => {
      while (running) {
        const claimed = await claimDue(t.db, 10, 60_000);
        await deliverClaimed(t.db, claimed, options);
        if (claimed.length === 0) await new Promise((r) => setTimeout(r, 20));
      }
    });
    await Promise.all(Array.from({ length: 25 }, () => newContact(account)));
    // Every message delivered: none can be claimed again. A second claim of one counts in its attempts.
    await expect.poll(() => t.db.webhookMessage.count({ where: { accountId: account.id, status: 'succeeded' } }), { timeout: 30_000 }).toBe(25);
    running = false;
    await Promise.all(others);
    const messages = await t.db.webhookMessage.findMany({ where: { accountId: account.id }, select: { attempts: true } });
    expect(messages.map((m) => m.attempts)).toEqual(Array(25).fill(1));
    const ids = receiver.received.map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(25);
    expect(new Set(ids).size).toBe(25);
    await receiver.close();
  });

  it('sendTestWebhook and redeliverEvent send now and answer the attempt', async () => {
    const account = await createAccount(t);
    const receiver = await startReceiver();
    const { endpoint: ep, secret } = await endpoint(t, account, receiver.url, ['deal.created']);
    const test = await t.gql('mutation ($id: ID!) { sendTestWebhook(endpointId: $id) { eventId attempt statusCode succeeded } }', { id: ep.id }, { as: account.owner });
    expect(test.data.sendTestWebhook).toMatchObject({ attempt: 1, statusCode: 204, succeeded: true });
    const body = new Webhook(secret).verify(receiver.received[0]!.body, receiver.received[0]!.headers as Record<string, string>) as any;
    expect(body.type).toBe('webhook_endpoint.test');
    const contact = (await newContact(account)).data.createContact;
    const event = await t.db.event.findFirstOrThrow({ where: { accountId: account.id, subjectId: contact.id } });
    const again = await t.gql('mutation ($id: ID!, $e: ID!) { redeliverEvent(endpointId: $id, eventId: $e) { eventId succeeded } }', { id: ep.id, e: event.id }, { as: account.owner });
    expect(again.data.redeliverEvent).toEqual({ eventId: event.id, succeeded: true });
    const other = await t.gql('mutation ($id: ID!, $e: ID!) { redeliverEvent(endpointId: $id, eventId: $e) { eventId } }', { id: ep.id, e: crypto.randomUUID() }, { as: account.owner });
    expect(other.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    await receiver.close();
  });

  it('an endpoint failing for three days is disabled, with an event', async () => {
    const account = await createAccount(t);
    const receiver = await startReceiver(() => 503);
    const { endpoint: ep } = await endpoint(t, account, receiver.url, ['contact.created']);
    await t.db.webhookEndpoint.update({ where: { id: ep.id }, data: { failingSince: new Date(Date.now() - 3 * 24 * 3600_000 - 1000) } });
    await newContact(account);
    await expect.poll(async () => (await t.db.webhookEndpoint.findUniqueOrThrow({ where: { id: ep.id } })).enabled).toBe(false);
    const disabled = await t.db.event.findFirst({ where: { accountId: account.id, type: 'webhook_endpoint.disabled' } });
    expect((disabled!.data as any).object).toMatchObject({ id: ep.id, enabled: false, disabled_reason: 'Failed for three days' });
    expect(JSON.stringify(disabled!.data)).not.toContain('secret');
    await receiver.close();
  });
});

describe('rotating the secret (docs/decisions.md §24)', () => {
  const ROTATE = 'mutation ($id: ID!, $s: Int) { rotateWebhookSecret(id: $id, expiresOldSecretIn: $s) { secret } }';
  const verifies = (secret: string, r: { body: string; headers: object }) => {
    try {
      new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
      return true;
    } catch {
      return false;
    }
  };

  it('after rotateWebhookSecret, deliveries carry both signatures (new, old) for 24 hours by default: each secret verifies', async () => {
    const account = await createAccount(t);
    const receiver = await startReceiver();
    const { endpoint: ep, secret: old } = await endpoint(t, account, receiver.url, ['contact.created']);
    const rotated = await t.gql(ROTATE, { id: ep.id }, { as: account.owner });
    expect(rotated.errors).toBeUndefined();
    const fresh: string = rotated.data.rotateWebhookSecret.secret;
    expect(fresh).not.toBe(old);
    await newContact(account); // through the queue
    await receiver.waitFor(1);
    const test = await t.gql('mutation ($id: ID!) { sendTestWebhook(endpointId: $id) { succeeded } }', { id: ep.id }, { as: account.owner }); // sent at once
    expect(test.data.sendTestWebhook.succeeded).toBe(true);
    for (const request of receiver.received) {
      expect(String(request.headers['webhook-signature'])).toMatch(/^v1,\S+ v1,\S+$/);
      expect([verifies(fresh, request), verifies(old, request)]).toEqual([true, true]);
    }
    const row = await t.db.webhookEndpoint.findUniqueOrThrow({ where: { id: ep.id } });
    expect(Math.abs(row.previousSecretExpiresAt!.getTime() - (Date.now() + 24 * 3600_000))).toBeLessThan(10 * 60_000);
    // The endpoint's events carry neither sealed secret.
    const events = await t.db.event.findMany({ where: { accountId: account.id, subjectId: ep.id } });
    expect(JSON.stringify(events)).not.toMatch(/previous_secret|v1\./);
    await receiver.close();
  });

  it('once the overlap is over only the new secret verifies; expiresOldSecretIn: 0 ends the old one at once', async () => {
    const account = await createAccount(t);
    const receiver = await startReceiver();
    const { endpoint: ep, secret: first } = await endpoint(t, account, receiver.url, ['contact.created']);
    const send = async () => {
      const r = await t.gql('mutation ($id: ID!) { sendTestWebhook(endpointId: $id) { succeeded } }', { id: ep.id }, { as: account.owner });
      expect(r.data.sendTestWebhook.succeeded).toBe(true);
      return receiver.received[receiver.received.length - 1]!;
    };
    // A short overlap, then its end as the clock would bring it (no sleeping in a test).
    const second: string = (await t.gql(ROTATE, { id: ep.id, s: 60 }, { as: account.owner })).data.rotateWebhookSecret.secret;
    expect([verifies(second, await send()), verifies(first, receiver.received.at(-1)!)]).toEqual([true, true]);
    await t.db.webhookEndpoint.update({ where: { id: ep.id }, data: { previousSecretExpiresAt: new Date(Date.now() - 1) } });
    let after = await send();
    expect(String(after.headers['webhook-signature'])).toMatch(/^v1,\S+$/);
    expect([verifies(second, after), verifies(first, after)]).toEqual([true, false]);
    // At once: the replaced secret signs nothing more.
    const third: string = (await t.gql(ROTATE, { id: ep.id, s: 0 }, { as: account.owner })).data.rotateWebhookSecret.secret;
    after = await send();
    expect([verifies(third, after), verifies(second, after)]).toEqual([true, false]);
    await receiver.close();
  });

  it('expiresOldSecretIn below 0 or beyond 7 days is a 400 on it, and nothing rotates', async () => {
    const account = await createAccount(t);
    const { endpoint: ep } = await endpoint(t, account, 'http://127.0.0.1:9/x');
    const before = await t.db.webhookEndpoint.findUniqueOrThrow({ where: { id: ep.id } });
    for (const s of [-1, 7 * 86_400 + 1]) {
      const r = await t.gql(ROTATE, { id: ep.id, s }, { as: account.owner });
      expect(r.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { expiresOldSecretIn: [expect.any(String)] } });
    }
    expect((await t.db.webhookEndpoint.findUniqueOrThrow({ where: { id: ep.id } })).secretCiphertext).toBe(before.secretCiphertext);
  });
});
