import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COLLECTIONS } from '../../src/exports/account-json.js';
import { createAccount, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cli } from './cli-io.js';

let t: TestApp;
let acc: TestAccount;
let dir: string;
const run = (...argv: string[]) => cli(argv, { config: t.deps.config, db: t.deps.db });

beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  for (let i = 0; i < 3; i++) await createContact(t, acc);
  dir = await mkdtemp(path.join(tmpdir(), 'crm-cli-export-'));
});
afterAll(async () => {
  await t?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('npm run cli -- export', () => {
  it('writes the account export document to the file and records it in the audit log under the owner', async () => {
    const out = path.join(dir, 'acme.json');
    const r = await run('export', '--account', acc.id, '--out', out);
    expect(r.code).toBe(0);
    expect(r.out[0]).toMatch(new RegExp(`^wrote ${out} \\(\\d+ bytes\\)$`));
    const doc = JSON.parse(await readFile(out, 'utf8'));
    expect(doc.export_metadata).toMatchObject({ account_id: acc.id, format_version: '1.0', gdpr_request: true });
    expect(doc.account).toMatchObject({ id: acc.id, owner_id: acc.owner.id });
    expect(doc.contacts).toHaveLength(3);
    for (const { key } of COLLECTIONS) expect(doc, key).toHaveProperty(key);
    const logs = await t.db.exportLog.findMany({ where: { accountId: acc.id } });
    expect(logs).toMatchObject([{ userId: acc.owner.id, kind: 'account_json' }]);
    expect(doc.export_metadata.exported_at).toBe(logs[0]!.createdAt.toISOString());
    expect(existsSync(`${out}.partial`)).toBe(false);
  });

  it('the file is the same document GET /api/v1/account/export sends', async () => {
    const out = path.join(dir, 'same.json');
    await run('export', '--account', acc.id, '--out', out);
    const fromCli = JSON.parse(await readFile(out, 'utf8'));
    const fromApi = await t.rest('GET', `/api/v1/account/export?account_id=${acc.id}`, { as: acc.owner });
    expect(fromApi.status).toBe(200);
    // Each export is recorded (an audit row and its export.granted event): the rest must match.
    const strip = (doc: Record<string, unknown>) => ({ ...doc, export_metadata: undefined, exports: undefined, events: undefined });
    expect(strip(fromCli)).toEqual(strip(fromApi.body));
  });

  it('an unknown account or an unwritable path is one line, leaves no file and records nothing', async () => {
    const before = await t.db.exportLog.count();
    const missing = randomUUID();
    const out = path.join(dir, 'none.json');
    expect(await run('export', '--account', missing, '--out', out)).toEqual({ code: 1, out: [], err: [`export: account ${missing} not found`] });
    const nowhere = path.join(dir, 'no-such-dir', 'x.json');
    expect(await run('export', '--account', acc.id, '--out', nowhere)).toEqual({
      code: 1, out: [], err: [`export: cannot write ${nowhere}: no such directory`],
    });
    expect(existsSync(out)).toBe(false);
    expect(await t.db.exportLog.count()).toBe(before);
  });

  it('--out is required and --account must be a UUID: usage mistakes, exit 2', async () => {
    expect((await run('export', '--account', acc.id)).code).toBe(2);
    expect(await run('export', '--account', 'acme', '--out', path.join(dir, 'x.json'))).toEqual({ code: 2, out: [], err: ['export: --account: Must be a UUID'] });
  });

  it('an existing file is never overwritten without --force: one line, exit 1, the file and the audit log untouched', async () => {
    const out = path.join(dir, 'keep.json');
    await writeFile(out, 'precious');
    const before = await t.db.exportLog.count();
    expect(await run('export', '--account', acc.id, '--out', out)).toEqual({
      code: 1, out: [], err: [`export: ${out} already exists; pass --force to replace it`],
    });
    expect(await readFile(out, 'utf8')).toBe('precious');
    expect(await t.db.exportLog.count()).toBe(before);

    const forced = await run('export', '--account', acc.id, '--out', out, '--force');
    expect(forced.code).toBe(0);
    expect(JSON.parse(await readFile(out, 'utf8')).export_metadata.account_id).toBe(acc.id);
    expect(existsSync(`${out}.partial`)).toBe(false);
  });
});
