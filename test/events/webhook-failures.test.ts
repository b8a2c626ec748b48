// docs/events.md#webhooks, docs/decisions.md §24: a message that cannot be sent (here a secret that
// will not open) is a failed attempt with its reason, never the delivery step's end: the other
// messages go out, and its third such attempt ends it, `failed`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDue, deliverClaimed, INTERNAL_ERROR } from '../../src/webhooks/delivery.service.js';
import { createAccount, unique } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startReceiver } from './receiver.js';

let t: TestApp; // no worker: the test runs the delivery steps
beforeAll(async () => {
  t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
});
afterAll(() => t?.close());

const CREATE = `mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { endpoint { id } } }`;

describe('webhook delivery: a message that throws', () => {
  it('a message whose send throws is a failed attempt with its reason; the others are delivered; its third such attempt ends it failed', async () => {
    const account = await createAccount(t);
    const receiver = await startReceiver();
    const endpoints = [];
    for (const url of [receiver.url, receiver.url]) {
      const r = await t.gql(CREATE, { input: { accountId: account.id, url, eventTypes: ['contact.created'] } }, { as: account.owner });
      endpoints.push(r.data.createWebhookEndpoint.endpoint.id as string);
    }
    const [good, broken] = endpoints as [string, string];
    await t.db.webhookEndpoint.update({ where: { id: broken }, data: { secretCiphertext: 'not-a-sealed-secret' } });
    await t.gql('mutation ($i: CreateContactInput!) { createContact(input: $i) { id } }', { i: { accountId: account.id, firstName: unique('Hook') } }, { as: account.member });

    const options = { box: t.deps.events.box!, policy: t.deps.events.policy, retryBaseMs: 1, leaseMs: 60_000, log: t.deps.log };
    const brokenMessage = () => t.db.webhookMessage.findFirstOrThrow({ where: { accountId: account.id, endpointId: broken } });
    // The step as the worker runs it, until the broken message ends (each pass resolves: nothing throws out of it).
    await expect.poll(async () => {
      await deliverClaimed(t.db, await claimDue(t.db, 10, 60_000), options);
      return (await brokenMessage()).status;
    }, { timeout: 30_000, interval: 20 }).toBe('failed');

    const deliveries = await t.db.webhookDelivery.findMany({ where: { accountId: account.id }, orderBy: { attempt: 'asc' } });
    expect(deliveries.filter((d) => d.endpointId === broken).map((d) => [d.attempt, d.succeeded, d.error])).toEqual([
      [1, false, INTERNAL_ERROR], [2, false, INTERNAL_ERROR], [3, false, INTERNAL_ERROR],
    ]);
    expect(deliveries.filter((d) => d.endpointId === good).map((d) => d.succeeded)).toEqual([true]);
    expect(receiver.received).toHaveLength(1);
    await receiver.close();
  });
});
