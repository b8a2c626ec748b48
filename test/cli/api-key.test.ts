import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cli } from './cli-io.js';

let t: TestApp;
let acc: TestAccount;
const run = (...argv: string[]) => cli(argv, { config: t.deps.config, db: t.deps.db });

beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  await createContact(t, acc);
});
afterAll(() => t?.close());

describe('npm run cli -- api-key create', () => {
  it('prints the secret once on stdout; the key is the system\'s, scoped as asked, and works at once', async () => {
    const r = await run('api-key', 'create', '--account', acc.id, '--name', 'Nightly sync', '--scopes', 'contacts:read,deals:read');
    expect(r.code).toBe(0);
    expect(r.out).toHaveLength(1);
    const secret = r.out[0]!;
    expect(secret).toMatch(/^crm_sk_[0-9A-Za-z]{8}_[0-9A-Za-z]{32,}$/);
    expect(r.err.join('\n')).not.toContain(secret);
    const key = await t.db.apiKey.findUniqueOrThrow({ where: { prefix: secret.split('_')[2] } });
    expect(key).toMatchObject({ accountId: acc.id, name: 'Nightly sync', scopes: ['CONTACTS_READ', 'DEALS_READ'], createdById: null });
    const event = await t.db.event.findFirstOrThrow({ where: { accountId: acc.id, type: 'api_key.created', subjectId: key.id } });
    expect(event).toMatchObject({ actorType: 'system', actorId: null });
    const list = await t.gql('query ($a: ID!) { contacts(accountId: $a) { total } }', { a: acc.id }, { as: { id: key.id, token: secret } });
    expect(list.errors).toBeUndefined();
    expect(list.data.contacts.total).toBe(1);
  });

  it('an unknown scope, an empty list, a name over 100 characters and a past expiry each name their flag; nothing is made', async () => {
    const before = await t.db.apiKey.count({ where: { accountId: acc.id } });
    const unknown = await run('api-key', 'create', '--account', acc.id, '--name', 'x', '--scopes', 'contacts:read,everything');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toEqual([expect.stringMatching(/^api-key: --scopes: Unknown scope/)]);
    const rest = await run('api-key', 'create', '--account', acc.id, '--name', 'n'.repeat(101), '--scopes', ',', '--expires-at', '2020-01-01T00:00:00Z');
    expect(rest.code).toBe(2);
    expect(rest.err.sort()).toEqual([
      'api-key: --expires-at: Must be in the future',
      'api-key: --name: Must be at most 100 characters',
      'api-key: --scopes: At least one scope',
    ]);
    expect(await t.db.apiKey.count({ where: { accountId: acc.id } })).toBe(before);
  });

  it('an account that does not exist is one line, exit 1', async () => {
    const r = await run('api-key', 'create', '--account', '00000000-0000-4000-8000-000000000000', '--name', 'x', '--scopes', 'exports');
    expect(r).toEqual({ code: 1, out: [], err: ['api-key: account 00000000-0000-4000-8000-000000000000 not found'] });
  });

  it('a subcommand other than create is a usage mistake', async () => {
    const r = await run('api-key', 'delete', '--account', acc.id);
    expect(r.code).toBe(2);
    expect(r.err[0]).toContain('the only subcommand is "create"');
  });
});
