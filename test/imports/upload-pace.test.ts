// docs/decisions.md §24: an upload holds no pooled database connection while its bytes arrive (it is
// spooled to a file first), and a body slower than the floor (64 KB in any 30 s; here 256 bytes a
// second, IMPORT_BODY_* set short) is cut off with 408 (docs/imports.md#bounds).
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MESSAGES } from '../../src/errors.js';
import { createAccount, createMember, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.js';

vi.setConfig({ testTimeout: 120_000 });

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { IMPORT_BODY_WINDOW_MS: '1000', IMPORT_BODY_MIN_BYTES: '256' } });
});
afterAll(() => t?.close());

type Answer = { status: number; body: any };

/** An upload whose body the test writes piece by piece (chunked), ended by `end()`. */
function openUpload(as: TestUser, accountId: string) {
  const req = request(new URL(`${t.baseUrl}/api/v1/imports?account_id=${accountId}&object=contacts`), {
    method: 'POST',
    headers: { authorization: `Bearer ${as.token}`, 'content-type': 'text/csv', 'transfer-encoding': 'chunked', 'x-forwarded-for': '198.51.100.88' },
  });
  let answered: Answer | null = null;
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk));
      res.on('end', () => resolve((answered = { status: res.statusCode!, body: JSON.parse(text || 'null') })));
    });
    req.on('error', reject);
  });
  answer.catch(() => undefined);
  return { req, answer, answered: () => answered };
}

describe('uploads: spooled, and cut off when too slow (docs/decisions.md §24)', () => {
  it('a body that stops arriving is cut off with 408, and nothing of it stays', async () => {
    const acc = await createAccount(t);
    const upload = openUpload(acc.member, acc.id);
    upload.req.write('first_name\r\nSlow\r\n');
    expect(await upload.answer).toEqual({ status: 408, body: { error: MESSAGES.requestTimeout } });
    upload.req.destroy();
    expect(await t.db.import.count({ where: { accountId: acc.id } })).toBe(0);
  });

  it("twelve trickling uploads beside another tenant's list: no 503, every list answered, every upload then stored", async () => {
    // 2 + 1 uploads in each of four accounts: within the limits of uploads under way.
    const accounts: TestAccount[] = await Promise.all([0, 1, 2, 3].map(() => createAccount(t)));
    const callers = await Promise.all(accounts.map(async (a) => [a.member, a.member, await createMember(t, a.id)] as const));
    const uploads = accounts.flatMap((a, i) => callers[i]!.map((caller) => openUpload(caller, a.id)));
    for (const upload of uploads) upload.req.write('first_name\r\nFirst\r\n');
    // A row of 100 bytes every 100 ms each: above the floor, far below a real client's pace.
    let n = 0;
    const trickle = setInterval(() => {
      n++;
      for (const upload of uploads) upload.req.write(`T${n}${'t'.repeat(95 - String(n).length)}\r\n`);
    }, 100);
    try {
      const other = await createAccount(t);
      for (let i = 0; i < 20; i++) {
        const list = await t.rest('GET', `/api/v1/contacts?account_id=${other.id}`, { as: other.member });
        expect(list.status).toBe(200);
      }
      expect(uploads.map((u) => u.answered())).toEqual(uploads.map(() => null)); // all still under way meanwhile
    } finally {
      clearInterval(trickle);
    }
    for (const upload of uploads) upload.req.end('Last\r\n');
    const answers = await Promise.all(uploads.map((u) => u.answer));
    expect(answers.map((a) => a.status)).toEqual(uploads.map(() => 202));
  });
});
