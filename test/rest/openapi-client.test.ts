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

/** The integrator's script: create a contact, read it back by id, with no `!` anywhere. */
const CLIENT = `import createClient from 'openapi-fetch';
import type { paths } from './api.js';

export async function createThenRead(baseUrl: string, token: string, accountId: string): Promise<{ created: string; read: string; name: string }> {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${token}\` } });
  const created = await client.POST('/api/v1/contacts', { body: { account_id: accountId, first_name: 'Typed' } });
  if (created.error) throw new Error(created.error.error);
  const id: string = created.data.data.id;
  const read = await client.GET('/api/v1/contacts/{id}', { params: { path: { id } } });
  if (read.error) throw new Error(read.error.error);
  const name: string = read.data.data.first_name;
  return { created: id, read: read.data.data.id, name };
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
    after = feed.data.next_cursor ?? undefined;
  } while (after);
  return { contacts, pages, invoice: { id: invoice.data.data.id, status: sent.data.data.status }, events };
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
});
afterAll(async () => {
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a client generated from the OpenAPI document', () => {
  it('type-checks under strict with no `!`: a created contact\'s data.id and a read\'s data are never null', async () => {
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const args = ['--noEmit', '--strict', '--noUncheckedIndexedAccess', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', 'client.ts', 'sync.ts'];
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
});
