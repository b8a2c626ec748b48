import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// docs/workflows.md "Three worked examples": each body is read from the page as written and saved
// through REST, so the page cannot show a workflow the service refuses.

const page = readFileSync(new URL('../../docs/workflows.md', import.meta.url), 'utf8');
const section = page.slice(page.indexOf('### Three worked examples'), page.indexOf('## Triggers'));
const examples = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as { name: string; trigger: { event: string }; actions: unknown[] });

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

describe('the worked examples of docs/workflows.md', { timeout: 60_000 }, () => {
  it('are three: a lead form, a won deal, an overdue invoice', () => {
    expect(examples.map((e) => e.trigger.event)).toEqual(['form.submitted', 'deal.status_changed', 'invoice.status_changed']);
  });

  it.each(examples.map((e) => [e.name, e] as const))('"%s" is accepted as written (201, saved as given)', async (_name, example) => {
    const r = await t.rest('POST', '/api/v1/workflows', { as: acc.member, body: { account_id: acc.id, ...example } });
    expect(r.status, r.text).toBe(201);
    expect(r.body.data).toMatchObject({ name: example.name, active: true, actions: example.actions });
  });
});
