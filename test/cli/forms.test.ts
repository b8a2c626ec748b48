import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cli } from './cli-io.js';

let t: TestApp;
let acc: TestAccount;
let dir: string;
const run = (...argv: string[]) => cli(argv, { config: t.deps.config, db: t.deps.db });

async function file(content: unknown): Promise<string> {
  const name = path.join(dir, `${randomUUID()}.json`);
  await writeFile(name, typeof content === 'string' ? content : JSON.stringify(content));
  return name;
}

const GOOD = {
  name: 'Website enquiry',
  successMessage: 'Thank you!',
  redirectUrl: 'https://example.com/thanks',
  honeypotField: 'website',
  fields: [
    { key: 'name', label: 'Your name', type: 'text', required: true, mapsTo: 'first_name' },
    { key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' },
    { key: 'plan', label: 'Plan', type: 'select', options: ['basic', 'pro'] },
  ],
};

beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  dir = await mkdtemp(path.join(tmpdir(), 'crm-cli-forms-'));
});
afterAll(async () => {
  await t?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('npm run cli -- form:create', () => {
  it('creates the form and its fields in order from a JSON file and prints its id', async () => {
    const r = await run('form:create', '--account', acc.id, '--file', await file(GOOD));
    expect(r).toMatchObject({ code: 0, err: [] });
    const form = await t.db.leadForm.findUnique({ where: { id: r.out[0] }, include: { fields: { orderBy: { position: 'asc' } } } });
    expect(form).toMatchObject({ accountId: acc.id, name: 'Website enquiry', successMessage: 'Thank you!', active: true, honeypotField: 'website' });
    expect(form!.fields.map((f) => [f.key, f.type, f.required, f.mapsTo, f.options])).toEqual([
      ['name', 'text', true, 'first_name', []],
      ['email', 'email', true, 'email', []],
      ['plan', 'select', false, null, ['basic', 'pro']],
    ]);
  });

  it('is validated by the same rules as Mutation.createLeadForm: every problem on its own line, nothing created', async () => {
    const before = await t.db.leadForm.count();
    const bad = {
      name: ' ',
      redirectUrl: 'javascript:alert(1)',
      fields: [
        { key: '1st', label: 'A', type: 'select' },
        { key: 'b', label: 'B', type: 'text' },
        { key: 'b', label: 'C', type: 'text' },
      ],
    };
    const r = await run('form:create', '--account', acc.id, '--file', await file(bad));
    expect(r.code).toBe(1);
    expect(r.out).toEqual([]);
    expect(r.err).toEqual(expect.arrayContaining([
      'form:create: name: Required',
      'form:create: redirectUrl: Must be an absolute http or https URL',
      'form:create: fields.0.key: Must start with a letter and hold only letters, digits and _ (at most 100)',
      'form:create: fields.0.options: A select field needs at least one option',
      'form:create: fields.2.key: Duplicate key',
      'form:create: fields: A field must map to first_name or email',
    ]));
    // The same answer the GraphQL API gives, detail for detail.
    const gql = await t.gql(
      'mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }',
      { input: { accountId: acc.id, ...bad } },
      { as: acc.owner },
    );
    const details = gql.errors![0]!.extensions!.details!;
    expect(r.err).toEqual(Object.entries(details).flatMap(([key, messages]) => messages.map((m) => `form:create: ${key}: ${m}`)));
    expect(await t.db.leadForm.count()).toBe(before);
  });

  it('a key the format does not know is refused rather than dropped, and accountId comes only from --account', async () => {
    const r = await run('form:create', '--account', acc.id, '--file', await file({
      ...GOOD, accountId: acc.id, colour: 'red', fields: [{ ...GOOD.fields[0], placeholder: 'Ada' }],
    }));
    expect(r).toEqual({
      code: 1,
      out: [],
      err: [
        'form:create: accountId: Given by --account; leave it out of the file',
        'form:create: colour: Unknown field',
        'form:create: fields.0.placeholder: Unknown field',
      ],
    });
  });

  it('an unreadable, non-JSON or non-object file is one clear line', async () => {
    const missing = path.join(dir, 'missing.json');
    const notJson = await file('{"name": ');
    const list = await file([GOOD]);
    expect((await run('form:create', '--account', acc.id, '--file', missing)).err).toEqual([`form:create: cannot read ${missing}: no such file`]);
    expect((await run('form:create', '--account', acc.id, '--file', notJson)).err).toEqual([
      expect.stringMatching(new RegExp(`^form:create: ${notJson} is not valid JSON: `)),
    ]);
    expect((await run('form:create', '--account', acc.id, '--file', list)).err).toEqual([`form:create: ${list} must hold a JSON object`]);
  });

  it('an unknown or malformed account is refused', async () => {
    const missing = randomUUID();
    expect((await run('form:create', '--account', missing, '--file', await file(GOOD))).err).toEqual([`form:create: account ${missing} not found`]);
    expect((await run('form:create', '--account', 'acme', '--file', await file(GOOD))).err).toEqual(['form:create: --account: Must be a UUID']);
  });
});
