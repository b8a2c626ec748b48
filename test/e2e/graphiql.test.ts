// GraphiQL in Chromium: the headers in the bar above it go with every tab's requests and survive a
// reload; the demo owner's token is offered until the visitor types their own (src/graphiql.ts).
// Without Chromium it skips locally and fails in CI.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { offerDemoToken } from '../../src/graphiql.js';
import { createAccount, createUser, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { skipIfMissing } from '../helpers/prerequisites.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

let t: TestApp;
let acc: TestAccount;
let browser: Browser;

/** Runs the active tab's operation and returns the Authorization header its request carried. */
async function runActiveTab(page: Page): Promise<string | undefined> {
  const isRun = (r: { method(): string; url(): string; postData(): string | null }) =>
    r.method() === 'POST' && new URL(r.url()).pathname === '/graphql' && !r.postData()?.includes('IntrospectionQuery');
  // On a busy machine the editor may not be ready for the first click (a new tab, a reload): click again
  // until a run starts. What the test proves is the header the run carries, not how fast the page is.
  for (let attempt = 1; ; attempt++) {
    const [request] = await Promise.all([
      page.waitForRequest(isRun, { timeout: attempt < 4 ? 6_000 : 20_000 }).catch((error: unknown) => {
        if (attempt < 4) return null;
        throw error;
      }),
      page.locator('button.graphiql-execute-button').click(),
    ]);
    if (request) return (await request.allHeaders()).authorization;
  }
}

describe.skipIf(skipIfMissing(existsSync(CHROMIUM) ? null : `Chromium at ${CHROMIUM}`))(`GraphiQL in Chromium (${CHROMIUM})`, () => {
  beforeAll(async () => {
    t = await createTestApp();
    acc = await createAccount(t);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 60_000 });
  }, 90_000);
  afterAll(async () => {
    offerDemoToken(null);
    await browser?.close();
    await t?.close();
  });

  it('the offered token goes with every tab, typed headers replace it for every tab, and both survive a reload', async () => {
    offerDemoToken(acc.owner.token); // as src/main.ts does once the demo is seeded
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(`${t.baseUrl}/graphql`);
    const bar = page.getByLabel('Headers for every tab (kept in this browser):');
    expect(JSON.parse(await bar.inputValue())).toEqual({ Authorization: `Bearer ${acc.owner.token}` });
    expect(await runActiveTab(page)).toBe(`Bearer ${acc.owner.token}`);

    await page.locator('button.graphiql-tab-add').click(); // a new tab shares them
    await page.locator('.graphiql-query-editor').click();
    await page.keyboard.type('query NewTab { __typename }');
    expect(await runActiveTab(page)).toBe(`Bearer ${acc.owner.token}`);

    const other = await createUser(t);
    await bar.fill(JSON.stringify({ Authorization: `Bearer ${other.token}` }));
    expect(await runActiveTab(page)).toBe(`Bearer ${other.token}`);
    await page.getByRole('tab').first().click(); // an older tab uses them too
    expect(await runActiveTab(page)).toBe(`Bearer ${other.token}`);

    await bar.fill('{"Authorization": '); // not JSON: said so, and the last valid headers still apply
    await page.getByText('Not a JSON object').waitFor();
    expect(await runActiveTab(page)).toBe(`Bearer ${other.token}`);
    await bar.fill(JSON.stringify({ Authorization: `Bearer ${other.token}` }));

    // A new server start offers a new token: what the visitor typed stays.
    offerDemoToken(acc.member.token);
    await page.reload();
    expect(JSON.parse(await bar.inputValue())).toEqual({ Authorization: `Bearer ${other.token}` });
    expect(await runActiveTab(page)).toBe(`Bearer ${other.token}`);
    await context.close();
  });

  it('a visitor who never typed headers gets the newly offered token after a restart', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    offerDemoToken(acc.owner.token);
    await page.goto(`${t.baseUrl}/graphql`);
    const bar = page.getByLabel('Headers for every tab (kept in this browser):');
    expect(JSON.parse(await bar.inputValue())).toEqual({ Authorization: `Bearer ${acc.owner.token}` });
    offerDemoToken(acc.member.token);
    await page.reload();
    expect(JSON.parse(await bar.inputValue())).toEqual({ Authorization: `Bearer ${acc.member.token}` });
    await context.close();
  });
});
