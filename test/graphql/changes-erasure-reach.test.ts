// docs/decisions.md §24 "Erasure reaches every copy": after eraseContact the person is in no table and
// no file the service writes: import rows waiting for the worker, the import errors file, webhook
// deliveries, idempotent answers, events, the account export and the contacts CSV, besides §12's list.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, unique } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { whereFound } from '../helpers/everywhere.js';
import { drain, importCsv } from '../imports/helpers.js';
import { startReceiver } from '../events/receiver.js';

let t: TestApp; // a worker delivering webhooks to a loopback receiver
beforeAll(async () => {
  t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', EVENT_POLL_MS: '30' }, worker: true });
});
afterAll(() => t?.close());

describe('Mutation.eraseContact reaches every copy', () => {
  test('a person in imports (refused, imported, still waiting), an idempotent create, webhook deliveries and events is found in no table and no file after erasure', async () => {
    const acc = await createAccount(t);
    const tag = unique('x').replace(/\W/g, '').slice(-8).toLowerCase();
    const person = { first: `Erin${tag}`, last: `Erasure-Import-${tag}`, email: `erin.erasure.${tag}@example.com`, phone: `555-ERIN-${tag}`, externalId: `crm-erin-${tag}` };
    const markers = Object.values(person).map((v) => v.toLowerCase());
    const row = `${person.first},${person.last},${person.email},${person.phone}`;
    const receiver = await startReceiver();
    const hook = await t.gql(
      'mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { endpoint { id } } }',
      { input: { accountId: acc.id, url: receiver.url, eventTypes: ['*'] } },
      { as: acc.owner },
    );
    expect(hook.errors).toBeUndefined();

    // An idempotent create: its stored answer holds the person.
    const created = await t.rest('POST', '/api/v1/contacts', {
      as: acc.member,
      headers: { 'idempotency-key': randomUUID() },
      body: { account_id: acc.id, first_name: person.first, last_name: person.last, email: person.email, phone: person.phone, external_id: person.externalId },
    });
    expect(created.status, created.text).toBe(201);
    const contactId: string = created.body.data?.id ?? created.body.id;
    // An import that refuses their row (line 3), and one that imports them (matched by e-mail).
    const refused = await importCsv(t, acc.member, acc.id, `first_name,last_name,email,phone,contact_type\r\nOther${tag},Person,other.${tag}@example.com,555-0000,lead\r\n${row},stranger\r\n`);
    expect(refused.status, refused.text).toBe(202);
    const imported = await importCsv(t, acc.member, acc.id, `first_name,last_name,email,phone,company\r\n${row},Windmills\r\n`, { match_on: 'email' });
    expect(imported.status, imported.text).toBe(202);
    await drain(t);
    expect((await t.db.import.findUniqueOrThrow({ where: { id: imported.body.data.id } })).updated).toBe(1);
    const errorsCsv = () => t.rest('GET', `/api/v1/imports/${refused.body.data.id}/errors`, { as: acc.member });
    expect((await errorsCsv()).text).toContain(`3,${row},`);
    // An import still waiting for the worker: its stored rows hold the person, by e-mail and by external id alone.
    const waiting = await importCsv(t, acc.member, acc.id,
      `first_name,last_name,email,phone,external_id\r\n${row},\r\n${person.first},${person.last},,${person.phone}, ${person.externalId}\r\n`);
    expect(waiting.status, waiting.text).toBe(202);
    // Every event so far delivered to the receiver, each attempt logged.
    await expect.poll(() => t.db.webhookMessage.count({ where: { accountId: acc.id, status: { not: 'succeeded' } } }), { timeout: 30_000 }).toBe(0);
    expect(receiver.received.some((r) => r.body.toLowerCase().includes(person.email))).toBe(true);
    expect(await t.db.webhookDelivery.count({ where: { accountId: acc.id } })).toBeGreaterThan(2);
    const before = await whereFound(t.db, markers);
    for (const place of ['contacts.email', 'import_errors.cells', 'import_rows.cells', 'idempotency_keys.result', 'events.data']) {
      expect(before.some((found) => found.startsWith(`${place}:`)), `${place} in ${before.join(', ')}`).toBe(true);
    }

    const r = await t.gql('mutation ($id: ID!) { eraseContact(id: $id) { contactId } }', { id: contactId }, { as: acc.owner });
    expect(r.errors).toBeUndefined();

    expect(await whereFound(t.db, markers)).toEqual([]);
    // The errors file keeps the refused line and why, without the person's cells.
    const errors = await errorsCsv();
    expect(errors.status).toBe(200);
    for (const marker of markers) expect(errors.text.toLowerCase()).not.toContain(marker);
    expect(errors.text).toMatch(/\r\n3,[^\r]*contact_type/);
    // The waiting import, run after the erasure, does not bring the person back.
    await drain(t);
    expect(await t.db.import.findUniqueOrThrow({ where: { id: waiting.body.data.id } })).toMatchObject({ status: 'completed', created: 0, failed: 2 });
    await expect.poll(() => t.db.webhookMessage.count({ where: { accountId: acc.id, status: { not: 'succeeded' } } }), { timeout: 30_000 }).toBe(0);
    expect(await whereFound(t.db, markers)).toEqual([]);
    // The files the service writes from what it stores.
    const contactsCsv = await t.rest('GET', `/api/v1/contacts/export?account_id=${acc.id}`, { as: acc.owner });
    const accountJson = await t.rest('GET', `/api/v1/account/export?account_id=${acc.id}`, { as: acc.owner });
    for (const file of [contactsCsv, accountJson]) {
      expect(file.status).toBe(200);
      for (const marker of markers) expect(file.text.toLowerCase()).not.toContain(marker);
    }
    expect(accountJson.body.import_errors).toHaveLength(3); // line 3 of the first, and the waiting rows, refused once emptied
    await receiver.close();
    // A ceiling against a hang, above the sum of the waits inside (two imports drained, two 30 s
    // polls for deliveries): the 30 s default ran out beside a second copy of the suite.
  }, 240_000);

  test("another person's import row whose address merely contains the erased one keeps its cells", async () => {
    const acc = await createAccount(t);
    const tag = unique('y').replace(/\W/g, '').slice(-8).toLowerCase();
    const ann = await t.db.contact.create({ data: { accountId: acc.id, firstName: 'Ann', email: `ann.${tag}@example.com` } });
    const waiting = await importCsv(t, acc.member, acc.id, `first_name,email\r\nAnn,ann.${tag}@example.com\r\nJo,joann.${tag}@example.com\r\n`);
    expect(waiting.status, waiting.text).toBe(202);
    const r = await t.gql('mutation ($id: ID!) { eraseContact(id: $id) { contactId } }', { id: ann.id }, { as: acc.owner });
    expect(r.errors).toBeUndefined();
    const rows = await t.db.importRow.findMany({ where: { accountId: acc.id, importId: waiting.body.data.id }, orderBy: { seq: 'asc' } });
    expect(rows.map((row) => row.cells)).toEqual([['', ''], ['Jo', `joann.${tag}@example.com`]]);
  });
});
