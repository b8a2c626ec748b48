import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// docs/rest.md "The OpenAPI document": a client generated from the served document, as integrators
// generate theirs (openapi-typescript + openapi-fetch), reads a sent answer's `data` as a value,
// never as "maybe null", under `strict`.

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

/** The integrator's script: create a contact, read it back by id, with no `!` anywhere; the record by its name. */
const CLIENT = `import createClient from 'openapi-fetch';
import type { components, paths } from './api.js';

type Contact = components['schemas']['Contact'];

export async function createThenRead(baseUrl: string, token: string, accountId: string): Promise<{ created: string; read: string; name: string }> {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${token}\` } });
  const created = await client.POST('/api/v1/contacts', { body: { account_id: accountId, first_name: 'Typed' } });
  if (created.error) throw new Error(created.error.error);
  const id: string = created.data.data.id;
  const read = await client.GET('/api/v1/contacts/{id}', { params: { path: { id } } });
  if (read.error) throw new Error(read.error.error);
  const contact: Contact = read.data.data;
  const name: string = contact.first_name;
  return { created: id, read: contact.id, name };
}
`;

/**
 * A system that syncs (docs/decisions.md §18), as its developer writes it against the generated
 * types: every contact by cursor, oldest change first; the events feed by cursor; an invoice
 * created and moved to sent. No casts: the parameters and answers type-check as they are.
 */
const SYNC = `import createClient from 'openapi-fetch';
import type { paths } from './api.js';

export async function sync(baseUrl: string, token: string, accountId: string, since: string) {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${token}\` } });
  const contacts: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await client.GET('/api/v1/contacts', {
      params: { query: { account_id: accountId, sort: 'updated_at', order: 'asc', updated_since: since, page_size: 2, ...(cursor ? { cursor } : {}) } },
    });
    if (page.error) throw new Error(page.error.error);
    for (const contact of page.data.data) contacts.push(contact.id);
    cursor = page.data.next_cursor ?? undefined;
    pages++;
  } while (cursor);

  const invoice = await client.POST('/api/v1/invoices', { body: { account_id: accountId, amount: 120.5, due_date: '2030-01-31' } });
  if (invoice.error) throw new Error(invoice.error.error);
  const sent = await client.POST('/api/v1/invoices/{id}/status', { params: { path: { id: invoice.data.data.id } }, body: { status: 'sent' } });
  if (sent.error) throw new Error(sent.error.error);

  const events: string[] = [];
  let after: string | undefined;
  do {
    const feed = await client.GET('/api/v1/events', { params: { query: { account_id: accountId, types: ['contact.created', 'invoice.created'], page_size: 2, ...(after ? { cursor: after } : {}) } } });
    if (feed.error) throw new Error(feed.error.error);
    for (const event of feed.data.data) events.push(\`\${event.type} \${event.id}\`);
    after = feed.data.next_cursor ?? undefined; // the last page's too: where the next poll starts
    if (feed.data.data.length < 2) break;
  } while (after);
  return { contacts, pages, invoice: { id: invoice.data.data.id, status: sent.data.data.status }, events };
}
`;

/**
 * A dashboard (docs/decisions.md §19), as its developer writes it against the generated types: an
 * invoice found by a fragment of its number, the receivables and the pipeline, a period's won deals
 * and the contact breakdown. No casts: a report's numbers are numbers, a stage may be null.
 */
const DASHBOARD = `import createClient from 'openapi-fetch';
import type { paths } from './api.js';

export async function dashboard(baseUrl: string, token: string, accountId: string, fragment: string) {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${token}\` } });
  const found = await client.GET('/api/v1/invoices', { params: { query: { account_id: accountId, search: fragment } } });
  if (found.error) throw new Error(found.error.error);
  const numbers: string[] = found.data.data.map((invoice) => invoice.invoice_number);

  const receivables = await client.GET('/api/v1/reports/receivables', { params: { query: { account_id: accountId, as_of: '2026-02-15' } } });
  if (receivables.error) throw new Error(receivables.error.error);
  const overdue: number = receivables.data.data.buckets.filter((b) => b.label !== 'current').reduce((sum, b) => sum + b.amount, 0);

  const pipeline = await client.GET('/api/v1/reports/pipeline', { params: { query: { account_id: accountId } } });
  if (pipeline.error) throw new Error(pipeline.error.error);
  const stages: string[] = pipeline.data.data.map((s) => \`\${s.stage?.name ?? 'no stage'}: \${s.count}\`);

  const deals = await client.GET('/api/v1/reports/deals', { params: { query: { account_id: accountId, from: '2026-03-01', to: '2026-03-31' } } });
  if (deals.error) throw new Error(deals.error.error);
  const won: number = deals.data.data.won_by_month.reduce((sum, m) => sum + m.value, 0);

  const contacts = await client.GET('/api/v1/reports/contacts', { params: { query: { account_id: accountId } } });
  if (contacts.error) throw new Error(contacts.error.error);
  const types: string[] = contacts.data.data.by_type.filter((k) => k.count > 0).map((k) => \`\${k.key} \${k.count}\`);
  return { numbers, overdue, stages, won, types };
}
`;

/**
 * A deploy script that may be retried after a network failure (docs/rest.md "Idempotency"): it sends
 * each write twice with one Idempotency-Key, the header typed from the document like any parameter.
 */
const RETRY = `import createClient from 'openapi-fetch';
import type { paths } from './api.js';

export async function hookTwice(baseUrl: string, token: string, accountId: string, url: string, key: string) {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${token}\` } });
  const create = () =>
    client.POST('/api/v1/webhook_endpoints', { params: { header: { 'Idempotency-Key': key } }, body: { account_id: accountId, url, event_types: ['*'] } });
  const [made, again] = [await create(), await create()];
  if (made.error || again.error) throw new Error('create failed');
  const id: string = made.data.data.endpoint.id;
  const remove = () => client.DELETE('/api/v1/webhook_endpoints/{id}', { params: { path: { id }, header: { 'Idempotency-Key': \`\${key}-delete\` } } });
  const [gone, goneAgain] = [await remove(), await remove()];
  return {
    ids: [id, again.data.data.endpoint.id],
    secrets: [made.data.data.secret, again.data.data.secret],
    deletes: [gone.response.status, goneAgain.response.status],
  };
}
`;

/**
 * A nightly script that uploads a file and may be run twice after a failure (docs/imports.md#retries):
 * the same file with one Idempotency-Key, a CSV body through the generated client.
 */
const NIGHTLY = `import createClient from 'openapi-fetch';
import type { paths } from './api.js';

export async function importTwice(baseUrl: string, token: string, accountId: string, csv: string, key: string) {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${token}\` } });
  const upload = () =>
    client.POST('/api/v1/imports', {
      params: { query: { account_id: accountId, object: 'contacts', match_on: 'none' }, header: { 'Idempotency-Key': key, 'X-File-Name': 'nightly.csv' } },
      body: csv,
      bodySerializer: (body: string) => body,
      headers: { 'Content-Type': 'text/csv' },
    });
  const [first, again] = [await upload(), await upload()];
  if (first.error || again.error) throw new Error('upload failed');
  const ids: string[] = [first.data.data.id, again.data.data.id];
  return { ids, statuses: [first.response.status, again.response.status] };
}
`;

let t: TestApp;
let acc: TestAccount;
let dir: string;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  dir = await mkdtemp(join(tmpdir(), 'openapi-client-'));
  // The script resolves openapi-fetch as an integrator's project does: from its own node_modules.
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  const doc = await (await fetch(`${t.baseUrl}/api/v1/openapi.json`)).json();
  await writeFile(join(dir, 'api.ts'), astToString(await openapiTS(doc)));
  await writeFile(join(dir, 'client.ts'), CLIENT);
  await writeFile(join(dir, 'sync.ts'), SYNC);
  await writeFile(join(dir, 'dashboard.ts'), DASHBOARD);
  await writeFile(join(dir, 'retry.ts'), RETRY);
  await writeFile(join(dir, 'nightly.ts'), NIGHTLY);
});
afterAll(async () => {
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a client generated from the OpenAPI document', () => {
  it('type-checks under strict with no `!`: a created contact\'s data.id and a read\'s data are never null', async () => {
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const args = ['--noEmit', '--strict', '--noUncheckedIndexedAccess', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', 'client.ts', 'sync.ts', 'dashboard.ts', 'retry.ts', 'nightly.ts'];
    const result = await run(process.execPath, [tsc, ...args], { cwd: dir }).then(
      () => '',
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
    );
    expect(result).toBe('');
  }, 120_000);

  it('runs against the service: the contact it creates is the one it reads back', async () => {
    const { createThenRead } = (await import(pathToFileURL(join(dir, 'client.ts')).href)) as {
      createThenRead: (baseUrl: string, token: string, accountId: string) => Promise<{ created: string; read: string; name: string }>;
    };
    const answer = await createThenRead(t.baseUrl, acc.member.token, acc.id);
    expect(answer.read).toBe(answer.created);
    expect(answer.name).toBe('Typed');
    expect((await t.db.contact.findUniqueOrThrow({ where: { id: answer.created } })).accountId).toBe(acc.id);
  });

  it('runs a sync loop: contacts by cursor since a time, an invoice created and sent, the events feed by cursor', async () => {
    const { sync } = (await import(pathToFileURL(join(dir, 'sync.ts')).href)) as {
      sync: (baseUrl: string, token: string, accountId: string, since: string) => Promise<{ contacts: string[]; pages: number; invoice: { id: string; status: string }; events: string[] }>;
    };
    const account = await createAccount(t);
    const since = new Date().toISOString();
    const made: string[] = [];
    for (const name of ['A', 'B', 'C', 'D', 'E']) {
      made.push((await t.rest('POST', '/api/v1/contacts', { as: account.owner, body: { account_id: account.id, first_name: name } })).body.data.id);
    }
    const answer = await sync(t.baseUrl, account.owner.token, account.id, since);
    expect(answer.contacts).toEqual(made);
    expect(answer.pages).toBe(3);
    expect(answer.invoice.status).toBe('sent');
    expect(answer.events.map((e) => e.split(' ')[0])).toEqual([...made.map(() => 'contact.created'), 'invoice.created']);
  });

  it('runs a dashboard: an invoice found by a fragment of its number, and the four reports read as typed values', async () => {
    const { dashboard } = (await import(pathToFileURL(join(dir, 'dashboard.ts')).href)) as {
      dashboard: (baseUrl: string, token: string, accountId: string, fragment: string) => Promise<{ numbers: string[]; overdue: number; stages: string[]; won: number; types: string[] }>;
    };
    const account = await createAccount(t);
    const stage = await t.db.pipelineStage.create({ data: { accountId: account.id, name: 'Proposal', position: 1 } });
    await t.db.deal.create({ data: { accountId: account.id, title: 'Open', value: 50, probability: 50, stageId: stage.id } });
    await t.db.deal.create({ data: { accountId: account.id, title: 'Won', value: 70, status: 'won', closedAt: new Date('2026-03-04T00:00:00Z'), createdAt: new Date('2026-03-01T00:00:00Z') } });
    await t.db.invoice.create({ data: { accountId: account.id, invoiceNumber: 'DASH-0042', amount: 19.99, status: 'sent', dueDate: new Date('2026-01-01') } });
    await t.db.invoice.create({ data: { accountId: account.id, invoiceNumber: 'DASH-0100', amount: 5, status: 'sent', dueDate: new Date('2026-03-01') } });
    await t.db.contact.create({ data: { accountId: account.id, firstName: 'Ada', contactType: 'client' } });
    const answer = await dashboard(t.baseUrl, account.member.token, account.id, 'h-004');
    expect(answer).toEqual({ numbers: ['DASH-0042'], overdue: 19.99, stages: ['Proposal: 1'], won: 70, types: ['client 1'] });
  });

  it('retries with one Idempotency-Key: one endpoint and one secret for two creates, 204 for both deletes', async () => {
    const { hookTwice } = (await import(pathToFileURL(join(dir, 'retry.ts')).href)) as {
      hookTwice: (baseUrl: string, token: string, accountId: string, url: string, key: string) => Promise<{ ids: string[]; secrets: string[]; deletes: number[] }>;
    };
    const account = await createAccount(t);
    const answer = await hookTwice(t.baseUrl, account.owner.token, account.id, 'https://93.184.215.14/hook', 'deploy-7');
    expect(answer.ids[1]).toBe(answer.ids[0]);
    expect(answer.secrets[1]).toBe(answer.secrets[0]);
    expect(answer.deletes).toEqual([204, 204]);
    expect(await t.db.webhookEndpoint.count({ where: { accountId: account.id } })).toBe(0);
  });

  it('uploads a file twice with one Idempotency-Key: 202 twice with one import, one copy of its rows', async () => {
    const { importTwice } = (await import(pathToFileURL(join(dir, 'nightly.ts')).href)) as {
      importTwice: (baseUrl: string, token: string, accountId: string, csv: string, key: string) => Promise<{ ids: string[]; statuses: number[] }>;
    };
    const account = await createAccount(t);
    const answer = await importTwice(t.baseUrl, account.member.token, account.id, 'First Name,Email\r\nAda,ada@example.com\r\n', 'nightly-2026-11-25');
    expect(answer.statuses).toEqual([202, 202]);
    expect(answer.ids[1]).toBe(answer.ids[0]);
    expect(await t.db.import.count({ where: { accountId: account.id } })).toBe(1);
    expect(await t.db.importRow.count({ where: { accountId: account.id } })).toBe(1);
  });
});
