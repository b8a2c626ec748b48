import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { waitingOn } from '../../src/db/together.js';
import { createAccount, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { holdTable, waitingForLocks } from '../helpers/held-locks.js';
import { skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';

// Form reads shared by concurrent submits (docs/scaling.md "Statements shared by concurrent
// requests"): every submit reads its form first; submits that arrive while a form read runs share
// the next one. Here the first read waits on a lock held on the forms, so the rest are sure to wait
// for it; each must still be answered by its own form: its own contact, or the 404 of an inactive or
// unknown form.
//
// PostgreSQL only: holding a lock while requests run needs a second connection, which PGlite (one
// connection, one statement at a time) has not. On PGlite the same path runs in every submit test.

let t: TestApp;
let acc: TestAccount;
const SKIP = skipIfMissing(unsetVariables('DATABASE_URL'));
const FIELDS = [
  { key: 'name', label: 'Name', type: 'text', mapsTo: 'first_name' },
  { key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' },
];

beforeAll(async () => {
  if (SKIP) return;
  // Waiting groups run when the statement before them ends, however long: the lock decides, not a clock.
  t = await createTestApp({ env: { DATABASE_SHARED_WAIT_MS: '60000' } });
  acc = await createAccount(t);
});
afterAll(() => t?.close());

async function newForm(successMessage: string): Promise<string> {
  const r = await t.gql('mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }', {
    input: { accountId: acc.id, name: unique('Form'), fields: FIELDS, successMessage },
  }, { as: acc.owner });
  expect(r.errors).toBeUndefined();
  return (r.data.createLeadForm as { id: string }).id;
}

let ip = 0;
const submit = (formId: string, email: string) =>
  t.rest('POST', `/api/v1/forms/${formId}/submit`, { body: { data: { name: 'Ada', email } }, clientIp: `10.9.0.${++ip}` });

describe.skipIf(SKIP)('form reads shared by concurrent submits (PostgreSQL)', () => {
  test('submits that arrive while a form is read share the next read, each answered by its own form', async () => {
    const [first, second, inactive] = [await newForm('First form'), await newForm('Second form'), await newForm('Gone')];
    await t.db.leadForm.update({ where: { id: inactive }, data: { active: false } });
    const unknown = '01900000-0000-7000-8000-000000000000';

    const held = await holdTable(t, 'lead_forms', 'ACCESS EXCLUSIVE');
    const heldSubmit = submit(first, `${unique('held')}@example.com`);
    await expect.poll(() => waitingForLocks(t)).toBe(1);
    // The same form twice (its id once in upper case), another form, an inactive and an unknown one.
    const asks = [
      { form: first, email: `${unique('a')}@example.com`, message: 'First form' },
      { form: first.toUpperCase(), email: `${unique('b')}@example.com`, message: 'First form' },
      { form: second, email: `${unique('c')}@example.com`, message: 'Second form' },
      { form: inactive, email: `${unique('d')}@example.com`, message: null },
      { form: unknown, email: `${unique('e')}@example.com`, message: null },
    ];
    const answers = asks.map((a) => submit(a.form, a.email));
    await expect.poll(() => waitingOn(t.db)).toBe(asks.length);
    await held.release();

    expect((await heldSubmit).status).toBe(200);
    for (const [i, answer] of (await Promise.all(answers)).entries()) {
      const { form, email, message } = asks[i]!;
      if (message === null) {
        expect(answer.status).toBe(404);
        expect(await t.db.contact.count({ where: { email } })).toBe(0);
        continue;
      }
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ success: true, successMessage: message });
      const contact = await t.db.contact.findFirstOrThrow({ where: { email }, include: { submissions: true } });
      expect(answer.body.contact_id).toBe(contact.id);
      expect(contact.submissions.map((s) => s.formId)).toEqual([form.toLowerCase()]);
    }
  });
});
