import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { waitingOn } from '../../src/db/together.js';
import { createAccount, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { holdTable, waitingForLocks } from '../helpers/held-locks.js';
import { skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';
import { countersAndRows } from '../helpers/record-counts.js';

// Creates written together (docs/scaling.md "Statements shared by concurrent requests"): creates that
// arrive while one is being written share the next statement. Here the first waits on a table lock
// held elsewhere, so the rest are sure to wait for it; each must still be answered as if written
// alone: its own record and event, its own error, and the counters exact.
//
// PostgreSQL only: holding a lock while requests run needs a second connection, which PGlite (one
// connection, one statement at a time) has not. On PGlite the same path runs in every create test.

let t: TestApp;
let acc: TestAccount;
const SKIP = skipIfMissing(unsetVariables('DATABASE_URL'));

beforeAll(async () => {
  if (SKIP) return;
  // Waiting groups run when the statement before them ends, however long: the lock decides, not a clock.
  t = await createTestApp({ env: { DATABASE_SHARED_WAIT_MS: '60000' } });
  acc = await createAccount(t);
});
afterAll(() => t?.close());

const create = (body: Record<string, unknown>) => t.rest('POST', '/api/v1/contacts', { body: { account_id: acc.id, ...body }, as: acc.member });

describe.skipIf(SKIP)('creates written together (PostgreSQL)', () => {
  test('creates that arrive while one is written share the next statement: each is answered with its own record and has its own one event', async () => {
    // Requests that give the same fields (a statement inserts the columns its rows give).
    const contact = (first_name: string, i: number) => ({ first_name, email: `${first_name}@example.com`, external_id: `ext-${first_name}`, contact_type: i % 2 ? 'client' : 'lead' });
    const held = await holdTable(t, 'contacts');
    const first = create(contact(unique('First'), 0));
    await expect.poll(() => waitingForLocks(t)).toBe(1);
    const names = Array.from({ length: 8 }, () => unique('Together'));
    const rest = names.map((first_name, i) => create(contact(first_name, i)));
    await expect.poll(() => waitingOn(t.db)).toBe(names.length);
    await held.release();

    const answers = await Promise.all(rest);
    expect((await first).status).toBe(201);
    expect(answers.map((r) => r.status)).toEqual(names.map(() => 201));
    expect(answers.map((r) => [r.body.data.first_name, r.body.data.email, r.body.data.external_id, r.body.data.contact_type])).toEqual(
      names.map((n, i) => [n, `${n}@example.com`, `ext-${n}`, i % 2 ? 'client' : 'lead']),
    );
    const ids = answers.map((r) => r.body.data.id as string);
    // One statement, so one transaction: the eight rows share the transaction id that wrote them.
    const writers = await t.db.$queryRaw<{ n: number }[]>`SELECT count(DISTINCT xmin::text)::int AS n FROM contacts WHERE id = ANY(${ids}::uuid[])`;
    expect(writers[0]!.n).toBe(1);
    const events = await t.db.event.findMany({ where: { accountId: acc.id, type: 'contact.created', subjectId: { in: ids } }, select: { subjectId: true, data: true } });
    expect(events.map((e) => [e.subjectId, (e.data as { object: { first_name: string } }).object.first_name]).sort()).toEqual(ids.map((id, i) => [id, names[i]]).sort());
    const { counters, rows } = await countersAndRows(t.db);
    expect(counters).toEqual(rows);
  });

  test('two creates with one external id in the same statement: the one written first is created, the other refused with the field named, as if each were alone', async () => {
    const held = await holdTable(t, 'contacts');
    const first = create({ first_name: unique('First'), external_id: unique('ext') });
    await expect.poll(() => waitingForLocks(t)).toBe(1);
    const shared = unique('ext');
    const both = [create({ first_name: unique('A'), external_id: shared }), create({ first_name: unique('B'), external_id: shared }), create({ first_name: unique('C'), external_id: unique('ext') })];
    await expect.poll(() => waitingOn(t.db)).toBe(3);
    await held.release();

    const [a, b, c] = await Promise.all(both);
    expect((await first).status).toBe(201);
    expect(c!.status).toBe(201);
    expect([a!.status, b!.status].sort()).toEqual([201, 400]);
    const refused = a!.status === 400 ? a! : b!;
    expect(refused.body).toEqual({ error: 'Invalid payload', details: { external_id: ['Already used in this account'] } });
    expect(await t.db.contact.count({ where: { accountId: acc.id, externalId: shared } })).toBe(1);
  });

  test('a shared statement that fails writes nothing, and each create is then written alone: the failure is only its own request\'s, a 400 naming the field', async () => {
    const company = async (name: string) => {
      const r = await t.rest('POST', '/api/v1/companies', { body: { account_id: acc.id, name: unique(name), domain: `${unique(name.toLowerCase())}.example` }, as: acc.member });
      expect(r.status).toBe(201);
      return r.body.data.id as string;
    };
    const [stays, goes] = [await company('Stays'), await company('Goes')];
    const held = await holdTable(t, 'contacts');
    const first = create({ first_name: unique('First'), company_id: stays });
    await expect.poll(() => waitingForLocks(t)).toBe(1);
    const names = [unique('Kept'), unique('Orphan'), unique('Kept')];
    const waiting = names.map((first_name, i) => create({ first_name, company_id: i === 1 ? goes : stays }));
    await expect.poll(() => waitingOn(t.db)).toBe(3);
    // The company the second names goes after its request was checked: the shared statement breaks a foreign key.
    await t.db.$executeRaw`DELETE FROM companies WHERE id = ${goes}::uuid`;
    await held.release();

    const [kept1, orphan, kept2] = await Promise.all(waiting);
    expect((await first).status).toBe(201);
    expect([kept1!.status, kept2!.status]).toEqual([201, 201]);
    // Its company went between its check and its write: the 400 it would get had it gone before.
    expect([orphan!.status, orphan!.body]).toEqual([400, { error: 'Invalid payload', details: { company_id: ['Not found in this account'] } }]);
    expect(await t.db.contact.count({ where: { accountId: acc.id, firstName: { in: names } } })).toBe(2);
    expect(await t.db.event.count({ where: { accountId: acc.id, type: 'contact.created', subjectId: { in: [kept1!.body.data.id, kept2!.body.data.id] } } })).toBe(2);
    const { counters, rows } = await countersAndRows(t.db);
    expect(counters).toEqual(rows);
  });
});
