import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// docs/rest.md "The OpenAPI document": the clients integrators generate with @hey-api/openapi-ts and
// orval (openapi-typescript: openapi-client.test.ts), from the live document, with their own CLIs
// as pinned in devDependencies (nothing fetched: CI's second run has no network). The programs use
// the named records and envelopes; `@ts-expect-error` lines prove those names are real types, not `any`.

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const bin = (path: string) => join(ROOT, 'node_modules', path);
/** A package's command, where its package.json puts it (it moves between major versions). */
const command = (pkg: string) => {
  const { bin: entry } = JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { bin: string | Record<string, string> };
  return join(ROOT, 'node_modules', pkg, typeof entry === 'string' ? entry : Object.values(entry)[0]!);
};

/** Runs a node script; its output when it fails, '' when it passes. */
const node = (args: string[], cwd: string) =>
  run(process.execPath, args, { cwd, maxBuffer: 16 * 1024 * 1024 }).then(
    () => '',
    (error: { stdout?: string; stderr?: string; message: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}` || error.message,
  );

const HEY_API = `import { createClient } from './heyapi/client/index.js';
import { contactById, createContact, createInvoice, listContacts, listDeals } from './heyapi/sdk.gen.js';
import type { Contact, ContactByIdResponse, Deal, Invoice, InvoiceWriteReceipt, ListContactsResponse } from './heyapi/types.gen.js';

export async function heyApi(baseUrl: string, token: string, accountId: string) {
  const client = createClient({ baseUrl, headers: { Authorization: \`Bearer \${token}\` } });
  const created = await createContact({ client, body: { account_id: accountId, first_name: 'Hey' } });
  if (created.error) throw new Error(created.error.error);
  const read = await contactById({ client, path: { id: created.data.data.id } });
  if (read.error) throw new Error(read.error.error);
  const envelope: ContactByIdResponse = read.data;
  const contact: Contact = envelope.data;
  // @ts-expect-error a contact's first_name is a string
  const wrong: number = contact.first_name;
  const page = await listContacts({ client, query: { account_id: accountId, page_size: 100 } });
  if (page.error) throw new Error(page.error.error);
  const list: ListContactsResponse = page.data;
  const next: string | null = list.next_cursor;
  const deals = await listDeals({ client, query: { account_id: accountId } });
  if (deals.error) throw new Error(deals.error.error);
  const deal: Deal | undefined = deals.data.data[0];
  const made = await createInvoice({ client, body: { account_id: accountId, amount: 12.5, due_date: '2030-01-31' } });
  if (made.error) throw new Error(made.error.error);
  // A write answers the record, or to a key without invoices:read what it wrote (docs/decisions.md §26).
  const invoice: Invoice | InvoiceWriteReceipt = made.data.data;
  return { name: contact.first_name, wrong, total: list.total, next, deal: deal?.title ?? null, invoice: invoice.status };
}
`;

const ORVAL = `import { contactById, createContact, createInvoice, listContacts, listDeals } from './orval/api.js';
import type { Contact, ContactByIdResponse, Deal, Invoice, InvoiceWriteReceipt, ListContactsResponse } from './orval/api.js';

export async function orval(token: string, accountId: string) {
  const auth: RequestInit = { headers: { Authorization: \`Bearer \${token}\`, 'Content-Type': 'application/json' } };
  const created = await createContact({ account_id: accountId, first_name: 'Orval' }, auth);
  if (created.status !== 201) throw new Error(created.data.error);
  const read = await contactById(created.data.data.id, auth);
  // 304 only answers an If-None-Match, which this read does not send: it has no body to read.
  if (read.status === 304) throw new Error('Not modified');
  if (read.status !== 200) throw new Error(read.data.error);
  const envelope: ContactByIdResponse = read.data;
  const contact: Contact = envelope.data;
  // @ts-expect-error a contact's first_name is a string
  const wrong: number = contact.first_name;
  const page = await listContacts({ account_id: accountId, page_size: 100 }, auth);
  if (page.status !== 200) throw new Error(page.data.error);
  const list: ListContactsResponse = page.data;
  const next: string | null = list.next_cursor;
  const deals = await listDeals({ account_id: accountId }, auth);
  if (deals.status !== 200) throw new Error(deals.data.error);
  const deal: Deal | undefined = deals.data.data[0];
  const made = await createInvoice({ account_id: accountId, amount: 12.5, due_date: '2030-01-31' }, auth);
  if (made.status !== 201) throw new Error(made.data.error);
  // A write answers the record, or to a key without invoices:read what it wrote (docs/decisions.md §26).
  const invoice: Invoice | InvoiceWriteReceipt = made.data.data;
  return { name: contact.first_name, wrong, total: list.total, next, deal: deal?.title ?? null, invoice: invoice.status };
}
`;

let t: TestApp;
let acc: TestAccount;
let dir: string;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  dir = await mkdtemp(join(tmpdir(), 'generated-clients-'));
  // The programs resolve the generators' runtimes as an integrator's project does: from its node_modules.
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  await writeFile(join(dir, 'openapi.json'), await (await fetch(`${t.baseUrl}/api/v1/openapi.json`)).text());
  // orval's fetch client calls relative URLs unless given the base URL.
  const orvalConfig = { api: { input: './openapi.json', output: { target: './orval/api.ts', client: 'fetch', mode: 'single', baseUrl: t.baseUrl } } };
  // CommonJS: orval 7 reads an ES module config's default export as no config at all.
  await writeFile(join(dir, 'orval.config.cjs'), `module.exports = ${JSON.stringify(orvalConfig)};\n`);
  await writeFile(join(dir, 'heyapi-client.ts'), HEY_API);
  await writeFile(join(dir, 'orval-client.ts'), ORVAL);
  const generated = await Promise.all([
    node([command('@hey-api/openapi-ts'), '-i', 'openapi.json', '-o', 'heyapi'], dir),
    node([command('orval'), '--config', 'orval.config.cjs'], dir),
  ]);
  expect(generated).toEqual(['', '']);
}, 180_000);
afterAll(async () => {
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('clients generated by @hey-api/openapi-ts and orval from the live document', () => {
  it('type-check under --strict, with Contact, Deal, Invoice and the envelopes as named types', async () => {
    const args = ['--noEmit', '--strict', '--noUncheckedIndexedAccess', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node'];
    expect(await node([bin('typescript/bin/tsc'), ...args, 'heyapi-client.ts', 'orval-client.ts'], dir)).toBe('');
  }, 180_000);

  it('run against the service: each creates and reads back a contact, lists, and creates a draft invoice', async () => {
    const { heyApi } = (await import(pathToFileURL(join(dir, 'heyapi-client.ts')).href)) as { heyApi: (baseUrl: string, token: string, accountId: string) => Promise<Record<string, unknown>> };
    const { orval } = (await import(pathToFileURL(join(dir, 'orval-client.ts')).href)) as { orval: (token: string, accountId: string) => Promise<Record<string, unknown>> };
    expect(await heyApi(t.baseUrl, acc.member.token, acc.id)).toEqual({ name: 'Hey', wrong: 'Hey', total: 1, next: null, deal: null, invoice: 'draft' });
    expect(await orval(acc.member.token, acc.id)).toEqual({ name: 'Orval', wrong: 'Orval', total: 2, next: null, deal: null, invoice: 'draft' });
  });
});
