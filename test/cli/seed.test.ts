import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedBench, type BenchProgress } from '../../src/cli/seed-bench.js';
import { DEMO } from '../../src/demo.js';
import { createAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cli } from './cli-io.js';

let t: TestApp;
const run = (...argv: string[]) => cli(argv, { config: t.deps.config, db: t.deps.db });

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

describe('seedBench (src/cli/seed-bench.ts)', () => {
  it('fills a new account: contacts, 20% deals and invoices, one form with submissions, 10% companies, notes and tasks, reported chunk by chunk', async () => {
    const progress: BenchProgress[] = [];
    const result = await seedBench(t.db, { contacts: 250, chunkSize: 100, seed: 7, onProgress: (p) => progress.push(p) });
    expect(result).toMatchObject({ contacts: 250, deals: 50, invoices: 50, submissions: 25, companies: 25, notes: 25, tasks: 25 });
    const { accountId, formId } = result;
    expect(await t.db.account.findUnique({ where: { id: accountId } })).toMatchObject({ ownerId: result.ownerId, nextInvoiceNumber: 51 });
    expect(await t.db.contact.count({ where: { accountId } })).toBe(250);
    expect(await t.db.deal.count({ where: { accountId, contactId: { not: null }, stageId: { not: null } } })).toBe(50);
    expect(await t.db.invoice.count({ where: { accountId } })).toBe(50);
    expect(await t.db.formSubmission.count({ where: { accountId, formId, contactId: { not: null } } })).toBe(25);
    expect(progress.filter((p) => p.phase === 'contacts').map((p) => p.done)).toEqual([0, 100, 200, 250]);
    expect(progress.map((p) => p.phase).filter((p, i, all) => all[i - 1] !== p)).toEqual(['contacts', 'deals', 'invoices', 'submissions', 'companies', 'notes', 'tasks']);
  });

  it('companies, notes and tasks: the newest contact has a timeline of 25 notes and 25 tasks with their events; no open task is due yet', async () => {
    const acc = await createAccount(t);
    const { accountId } = await seedBench(t.db, { accountId: acc.id, contacts: 100, notes: 40, tasks: 40, companies: 30, seed: 5 });
    expect(await t.db.company.count({ where: { accountId } })).toBe(30);
    const newest = await t.db.contact.findFirstOrThrow({ where: { accountId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
    expect(await t.db.note.count({ where: { accountId, contactId: newest.id } })).toBeGreaterThanOrEqual(25);
    expect(await t.db.task.count({ where: { accountId, contactId: newest.id } })).toBeGreaterThanOrEqual(25);
    const events = await t.db.event.findMany({ where: { accountId, contactId: newest.id } });
    expect(events.length).toBe((await t.db.note.count({ where: { accountId, contactId: newest.id } })) + (await t.db.task.count({ where: { accountId, contactId: newest.id } })));
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(['note.created', 'task.created']));
    expect(await t.db.task.count({ where: { accountId, status: 'open', dueAt: { lt: new Date() } } })).toBe(0);
    const page = await t.gql('query ($c: ID!) { contact(id: $c) { timeline(first: 50) { nodes { type } } } }', { c: newest.id }, { as: acc.member });
    expect(page.data.contact.timeline.nodes.length).toBe(events.length);
  });

  it('the rows look real: names, unique reserved-domain e-mails, spread-out dates, numbered invoices', async () => {
    const { accountId } = await seedBench(t.db, { contacts: 300, deals: 0, invoices: 10, submissions: 0, seed: 1 });
    const contacts = await t.db.contact.findMany({ where: { accountId } });
    const emails = contacts.map((c) => c.email).filter((e): e is string => e !== null);
    expect(new Set(emails).size).toBe(emails.length);
    expect(emails.length).toBeGreaterThan(240);
    for (const email of emails) expect(email).toMatch(/^[a-z0-9._]+@([a-z0-9]+\.example|example\.(com|net|org)|mail\.example)$/);
    expect(new Set(contacts.map((c) => c.firstName)).size).toBeGreaterThan(20);
    const days = new Set(contacts.map((c) => c.createdAt.toISOString().slice(0, 10)));
    expect(days.size).toBeGreaterThan(200); // two years of history, not one instant
    const numbers = (await t.db.invoice.findMany({ where: { accountId }, orderBy: { invoiceNumber: 'asc' } })).map((i) => i.invoiceNumber);
    expect(numbers[0]).toBe('INV-000001');
    expect(numbers.at(-1)).toBe('INV-000010');
  });

  it('into an existing account it keeps its pipeline and continues its invoice numbering', async () => {
    const acc = await createAccount(t);
    const stage = await t.db.pipelineStage.create({ data: { accountId: acc.id, name: 'Only stage' } });
    await t.db.account.update({ where: { id: acc.id }, data: { nextInvoiceNumber: 41 } });
    const result = await seedBench(t.db, { accountId: acc.id, contacts: 20, deals: 5, invoices: 3 });
    expect(result).toMatchObject({ accountId: acc.id, ownerId: acc.owner.id, contacts: 20, deals: 5, invoices: 3, submissions: 2 });
    expect(await t.db.deal.count({ where: { accountId: acc.id, stageId: stage.id } })).toBe(5);
    const numbers = (await t.db.invoice.findMany({ where: { accountId: acc.id } })).map((i) => i.invoiceNumber).sort();
    expect(numbers).toEqual(['INV-000041', 'INV-000042', 'INV-000043']);
    // The member sees the data through the API like any other.
    const page = await t.gql('query ($a: ID!) { contacts(accountId: $a) { total } }', { a: acc.id }, { as: acc.member });
    expect(page.data.contacts.total).toBe(20);
  });
});

describe('npm run cli -- seed', () => {
  it('seed bench prints a one-line summary naming the account', async () => {
    const r = await run('seed', 'bench', '--contacts', '30', '--invoices', '2', '--seed', '3');
    expect(r.code).toBe(0);
    expect(r.out).toHaveLength(1);
    expect(r.out[0]).toMatch(/^account [0-9a-f-]{36} \(owner [0-9a-f-]{36}\): 30 contacts, 6 deals, 2 invoices, form [0-9a-f-]{36} with 3 submissions$/);
  });

  it('seed bench refuses bad numbers and an unknown account, one line each', async () => {
    expect((await run('seed', 'bench', '--contacts', '0')).err).toEqual(['seed: --contacts: Must be from 1 to 5000000']);
    expect((await run('seed', 'bench', '--contacts', '10', '--deals=-1')).err).toEqual(['seed: --deals: Must be from 0 to 5000000']);
    const dash = await run('seed', 'bench', '--contacts', '10', '--deals', '-1');
    expect(dash.err).toHaveLength(1); // Node's two-line parse message, folded into one
    expect(dash.err[0]).toMatch(/^seed: Option '--deals' argument is ambiguous\. Did you forget/);
    const missing = '00000000-0000-4000-8000-00000000dead';
    expect(await run('seed', 'bench', '--contacts', '10', '--account', missing)).toEqual({ code: 1, out: [], err: [`seed: account ${missing} not found`] });
    const usage = await run('seed', 'bench');
    expect(usage.code).toBe(2);
    expect(usage.err[0]).toMatch(/^seed: --contacts is required \(usage: /);
  });

  it('seed bench draws one bar per phase, each counting the rows it names', async () => {
    const drawn: string[] = [];
    // A terminal as cli-progress sees one: it draws only on a TTY.
    const terminal = Object.assign(new Writable({ write: (chunk, _encoding, done) => (drawn.push(String(chunk)), done()) }), { isTTY: true, columns: 120 });
    const r = await cli(['seed', 'bench', '--contacts', '30', '--invoices', '2', '--seed', '3'], { config: t.deps.config, db: t.deps.db, progressStream: terminal });
    expect(r.code).toBe(0);
    const screen = drawn.join('').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
    for (const [phase, rows] of [['contacts', 30], ['deals', 6], ['invoices', 2], ['submissions', 3]] as const) {
      expect(screen).toMatch(new RegExp(`${phase} *\\[[^\\]]+\\] 100% \\| ${rows}/${rows} `));
    }
    expect(screen).not.toContain('/41'); // no bar counts every row of every phase
  });

  it('seed demo prints curl lines for the PORT and HOST the server is configured with, a wildcard host as loopback', async () => {
    const r = await cli(['seed', 'demo'], { config: { ...t.deps.config, port: 4123, host: '0.0.0.0' }, db: t.deps.db });
    expect(r.code).toBe(0);
    expect(r.out.join('\n')).toContain(`"http://127.0.0.1:4123/api/v1/contacts?account_id=${DEMO.accountId}"`);
    const any = await cli(['seed', 'demo'], { config: { ...t.deps.config, port: 0 }, db: t.deps.db });
    expect(any.err).toEqual(['PORT=0: the server picks its port when it starts; put the one its "listening" line names in place of <port>']);
    expect(any.out.join('\n')).toContain('http://127.0.0.1:<port>/graphql');
  });

  it('seed demo creates the demo account once and prints a token for its owner', async () => {
    const first = await run('seed', 'demo');
    const second = await run('seed', 'demo');
    expect(first.code).toBe(0);
    expect(second.code).toBe(0);
    expect(await t.db.contact.count({ where: { accountId: DEMO.accountId } })).toBe(6);
    const token = /export TOKEN=(\S+)/.exec(second.out.join('\n'))?.[1];
    await expect(t.deps.verifyToken(token!)).resolves.toMatchObject({ sub: DEMO.ownerId });
  });

  it('an unknown dataset is a usage line', async () => {
    const r = await run('seed', 'prod');
    expect(r.code).toBe(2);
    expect(r.err[0]).toMatch(/^seed: unknown dataset "prod" \(usage: /);
  });
});
