import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createUser, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cli } from './cli-io.js';

let t: TestApp;
let acc: TestAccount;
const run = (...argv: string[]) => cli(argv, { config: t.deps.config, db: t.deps.db });

beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

describe('npm run cli -- account:create', () => {
  it('creates an account owned by the user, recording a user id seen for the first time, and prints its id', async () => {
    const owner = randomUUID();
    const r = await run('account:create', '--owner', owner, '--name', '  Acme Ltd  ');
    expect(r).toMatchObject({ code: 0, err: [] });
    const account = await t.db.account.findUnique({ where: { id: r.out[0] } });
    expect(account).toMatchObject({ name: 'Acme Ltd', ownerId: owner });
    expect(await t.db.user.findUnique({ where: { id: owner } })).not.toBeNull();
  });

  it('the new owner can use the account through the API', async () => {
    const owner = await createUser(t);
    const r = await run('account:create', '--owner', owner.id, '--name', 'Mine');
    const me = await t.gql('{ me { accounts { id name owner { id } } } }', {}, { as: owner });
    expect(me.errors).toBeUndefined();
    expect(me.data.me.accounts).toEqual([{ id: r.out[0], name: 'Mine', owner: { id: owner.id } }]);
  });

  it('the core rules apply: a blank name or a malformed owner is refused, one line each, and nothing is created', async () => {
    const before = await t.db.account.count();
    const r = await run('account:create', '--owner', 'ada', '--name', '   ');
    expect(r).toEqual({ code: 2, out: [], err: ['account:create: --name: Required', 'account:create: --owner: Must be a UUID'] });
    expect(await t.db.account.count()).toBe(before);
  });

  it('a missing option is a usage line and exit 2', async () => {
    const r = await run('account:create', '--owner', randomUUID());
    expect(r.code).toBe(2);
    expect(r.err).toEqual(['account:create: --name is required (usage: npm run cli -- account:create --owner <user uuid> --name <name>)']);
  });
});

describe('npm run cli -- member:add', () => {
  it('adds a team member: a new user id is recorded, the e-mail goes on the membership only', async () => {
    const user = randomUUID();
    const r = await run('member:add', '--account', acc.id, '--user', user, '--email', 'new@example.com');
    expect(r).toEqual({ code: 0, out: [`${user} is a member of account ${acc.id}`], err: [] });
    expect(await t.db.teamMember.findUnique({ where: { accountId_userId: { accountId: acc.id, userId: user } } })).toMatchObject({
      role: 'member', email: 'new@example.com',
    });
    // The user's own e-mail comes from their token, never from an owner's label for them.
    expect(await t.db.user.findUnique({ where: { id: user } })).toMatchObject({ email: null });
  });

  it('adding an existing member again is harmless and updates the e-mail', async () => {
    const r = await run('member:add', '--account', acc.id, '--user', acc.member.id, '--email', 'changed@example.com');
    expect(r.code).toBe(0);
    expect(await t.db.teamMember.count({ where: { accountId: acc.id } })).toBeGreaterThanOrEqual(1);
    const row = await t.db.teamMember.findUnique({ where: { accountId_userId: { accountId: acc.id, userId: acc.member.id } } });
    expect(row?.email).toBe('changed@example.com');
  });

  it('the owner cannot be added as a member (the core rule, named by its flag)', async () => {
    const r = await run('member:add', '--account', acc.id, '--user', acc.owner.id);
    expect(r).toEqual({ code: 1, out: [], err: ['member:add: --user: Already the owner of this account'] });
  });

  it('an unknown account is one clear line', async () => {
    const missing = randomUUID();
    const r = await run('member:add', '--account', missing, '--user', randomUUID());
    expect(r).toEqual({ code: 1, out: [], err: [`member:add: account ${missing} not found`] });
  });

  it('malformed values are refused before anything is written, as usage mistakes (exit 2)', async () => {
    const r = await run('member:add', '--account', 'x', '--user', randomUUID(), '--email', 'not-mail');
    expect(r.code).toBe(2);
    expect(r.err).toEqual(['member:add: --account: Must be a UUID', 'member:add: --email: Must be a valid e-mail address']);
  });
});

describe('npm run cli -- migrate', () => {
  it('status lists the database as in sync (exit 0) and deploy has nothing to do', async () => {
    const status = await run('migrate', 'status');
    expect(status.code).toBe(0);
    expect(status.out[0]).toMatch(/: \d+ applied, 0 pending$/);
    const deploy = await run('migrate');
    expect(deploy).toMatchObject({ code: 0, err: [] });
    expect(deploy.out[0]).toMatch(/ is up to date$/);
  });

  it('an unknown action is a usage line', async () => {
    const r = await run('migrate', 'sideways');
    expect(r.code).toBe(2);
    expect(r.err[0]).toMatch(/^migrate: unknown action "sideways" \(usage: npm run cli -- migrate \[deploy\|status\]\)$/);
  });
});
