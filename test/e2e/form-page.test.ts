// The lead-form page in a real browser (Debian's Chromium through playwright-core) against the
// harness's real HTTP server: fill, submit, see the answer, find the contact in the database.
// Without Chromium it skips locally and fails in CI (.ci/run installs it).
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { skipIfMissing } from '../helpers/prerequisites.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// Without the background-networking flags Chromium waits on the network, which CI does not have.
const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];
const CREATE = `mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }`;
const FIELDS = [
  { key: 'name', label: 'Your name', type: 'text', required: true, mapsTo: 'first_name' },
  { key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' },
  { key: 'plan', label: 'Plan', type: 'select', options: ['Basic', 'Pro'] },
  { key: 'message', label: 'Message', type: 'textarea' },
  { key: 'agree', label: 'I agree to be contacted', type: 'checkbox', required: true },
  { key: 'campaign', label: 'Campaign', type: 'hidden' },
];

let t: TestApp;
let acc: TestAccount;
let browser: Browser;
let page: Page;

async function newForm(input: Record<string, unknown> = {}): Promise<string> {
  const r = await t.gql(CREATE, { input: { accountId: acc.id, name: 'Talk to us', fields: FIELDS, honeypotField: 'website', ...input } }, { as: acc.owner });
  expect(r.errors).toBeUndefined();
  return r.data.createLeadForm.id;
}

async function fill(email: string) {
  await page.getByLabel('Your name').fill('Grace');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Plan').selectOption('Pro');
  await page.getByLabel('Message').fill('Hello <b>there</b>');
  await page.getByLabel('I agree to be contacted').check();
}

describe.skipIf(skipIfMissing(existsSync(CHROMIUM) ? null : `Chromium at ${CHROMIUM}`))(`the lead-form page in Chromium (${CHROMIUM})`, () => {
  const errors: string[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    acc = await createAccount(t);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 60_000 });
    page = await browser.newPage();
    page.setDefaultTimeout(10_000); // a broken page fails in seconds, not at the test's limit
    // A CSP violation or a script error would show up here: the page must run clean.
    page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()); });
    page.on('pageerror', (error) => errors.push(error.message));
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('a visitor fills the form, sees the success message, and becomes a contact with the submission recorded', async () => {
    const formId = await newForm({ successMessage: 'Thanks, Grace will hear from us.' });
    const email = `${unique('grace')}@example.com`;
    await page.goto(`${t.baseUrl}/forms/${formId}?campaign=spring`);
    await expect(page.title()).resolves.toBe('Talk to us');
    await fill(email);
    await page.getByRole('button', { name: 'Send' }).click();

    // playwright-core brings no expect(): wait for the live region to say it.
    await page.getByRole('status').getByText('Thanks, Grace will hear from us.').waitFor({ timeout: 10_000 });
    expect(await page.locator('#lead-form').isHidden()).toBe(true);

    const contact = await t.db.contact.findFirst({ where: { accountId: acc.id, email } });
    expect(contact).toMatchObject({ firstName: 'Grace', contactType: 'lead', source: 'website' });
    const submission = await t.db.formSubmission.findFirst({ where: { formId, contactId: contact!.id } });
    expect(submission?.data).toEqual({ name: 'Grace', email, plan: 'Pro', message: 'Hello <b>there</b>', agree: 'yes', campaign: 'spring' });
    expect(submission?.isSpam).toBe(false);
    expect(submission?.page).toBe(`${t.baseUrl}/forms/${formId}?campaign=spring`);
    expect(errors).toEqual([]);
  });

  /** The accessibility tree's nodes whose "invalid" state is anything but false: what a screen reader announces. */
  async function announcedInvalid(): Promise<string[]> {
    const cdp = await page.context().newCDPSession(page);
    try {
      type AXNode = { role?: { value?: string }; name?: { value?: string }; properties?: { name: string; value: { value?: unknown } }[] };
      const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as { nodes: AXNode[] };
      return nodes
        .filter((node) => node.properties?.some((p) => p.name === 'invalid' && p.value.value !== 'false'))
        .map((node) => `${node.role?.value} ${node.name?.value}`);
    } finally {
      await cdp.detach();
    }
  }
  const focused = () => page.evaluate(() => document.activeElement?.id);
  // Here the select is required too: untouched, neither it nor the checkbox may be announced invalid.
  const WITH_REQUIRED_SELECT = FIELDS.map((field) => (field.key === 'plan' ? { ...field, required: true } : field));
  const REQUIRED = [['Your name', 'name'], ['E-mail', 'email'], ['Plan', 'plan'], ['I agree to be contacted', 'agree']] as const;

  it('before any interaction nothing is invalid; an empty Send shows every required field inline and as a summary link that focuses it, and sends nothing', async () => {
    const formId = await newForm({ fields: WITH_REQUIRED_SELECT });
    const sent: string[] = [];
    const onRequest = (request: { url(): string }) => { if (request.url().endsWith('/submit')) sent.push(request.url()); };
    page.on('request', onRequest);
    try {
      await page.goto(`${t.baseUrl}/forms/${formId}`);
      // The page's own path, never the browser's pop-up: novalidate, so no constraint check (no `invalid` event) on Send.
      expect(await page.evaluate(() => (document.getElementById('lead-form') as HTMLFormElement).noValidate)).toBe(true);
      await page.evaluate(() => {
        const w = window as unknown as { invalidEvents: number };
        w.invalidEvents = 0;
        document.addEventListener('invalid', () => { w.invalidEvents += 1; }, true);
      });
      // Untouched: nothing invalid in the DOM, in CSS or in what a screen reader hears; required is said by aria-required.
      expect(await page.locator('[aria-invalid="true"]').count()).toBe(0);
      expect(await page.evaluate(() => document.querySelectorAll(':invalid').length)).toBe(0);
      expect(await announcedInvalid()).toEqual([]);
      for (const [label] of REQUIRED) expect(await page.getByLabel(label).getAttribute('aria-required'), label).toBe('true');

      await page.getByRole('button', { name: 'Send' }).click();
      const summary = page.getByRole('alert');
      await summary.getByRole('link').first().waitFor();
      expect(await focused()).toBe('form-error'); // the summary takes focus, as GOV.UK's does
      expect(await summary.getByRole('heading').textContent()).toBe('There is a problem');
      expect(await summary.getByRole('link').allTextContents()).toEqual(REQUIRED.map(([label]) => `${label}: Required`));
      for (const [label, key] of REQUIRED) {
        const field = page.getByLabel(label);
        expect(await field.getAttribute('aria-invalid'), label).toBe('true');
        expect(await field.getAttribute('aria-describedby'), label).toBe(`e-${key}`);
        expect(await page.locator(`#e-${key}`).textContent(), label).toBe('Error: Required');
        await summary.getByRole('link', { name: `${label}: Required` }).click();
        expect(await focused(), label).toBe(`f-${key}`);
      }
      // Only the required fields; the screen reader hears exactly those as invalid.
      expect(await page.locator('[aria-invalid="true"]').count()).toBe(REQUIRED.length);
      expect((await announcedInvalid()).sort()).toEqual(['checkbox I agree to be contacted', 'combobox Plan', 'textbox E-mail', 'textbox Your name']);
      expect(await page.evaluate(() => (window as unknown as { invalidEvents: number }).invalidEvents)).toBe(0);
      expect(sent).toEqual([]);

      // A marked field is checked again as the visitor types: the message goes once it is right.
      await page.getByLabel('Your name').fill('Grace');
      await page.waitForFunction(() => !document.getElementById('f-name')!.hasAttribute('aria-invalid'));
      expect(await page.locator('#e-name').textContent()).toBe('');
      expect(await t.db.formSubmission.count({ where: { formId } })).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      page.off('request', onRequest);
    }
  });

  it('a bad e-mail gets its inline message once the visitor leaves the field, and a summary link on Send; nothing is sent', async () => {
    const formId = await newForm();
    await page.goto(`${t.baseUrl}/forms/${formId}`);
    // The browser accepts `grace@localhost`; the service wants a domain with a dot, and the page applies its rule.
    const email = page.getByLabel('E-mail');
    await email.fill('grace@localhost');
    expect(await email.getAttribute('aria-invalid')).toBeNull(); // not while typing
    await email.press('Tab');
    await page.locator('#e-email').getByText('Must be a valid e-mail address').waitFor();
    expect(await page.locator('#e-email').textContent()).toBe('Error: Must be a valid e-mail address');
    expect(await email.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('[aria-invalid="true"]').count()).toBe(1); // the untouched fields stay unmarked

    await page.getByLabel('Your name').fill('Grace');
    await page.getByLabel('I agree to be contacted').check();
    await page.getByRole('button', { name: 'Send' }).click();
    const link = page.getByRole('alert').getByRole('link', { name: 'E-mail: Must be a valid e-mail address' });
    await link.waitFor();
    expect(await page.getByRole('alert').getByRole('link').count()).toBe(1);
    expect(await focused()).toBe('form-error');
    await link.click();
    expect(await focused()).toBe('f-email');
    expect(await t.db.formSubmission.count({ where: { formId } })).toBe(0);
    expect(errors).toEqual([]);
  });

  it('a value only the service judges (a name longer than the contact column) comes back in the summary by its label and next to its field', async () => {
    const formId = await newForm();
    await page.goto(`${t.baseUrl}/forms/${formId}`);
    await fill(`${unique('long')}@example.com`);
    // The field allows 1000 characters (its maxlength); the contact's first name only 100, which the page does not know.
    await page.getByLabel('Your name').fill('G'.repeat(101));
    const refused = page.waitForResponse((r) => r.url().endsWith('/submit'));
    await page.getByRole('button', { name: 'Send' }).click();
    expect((await refused).status()).toBe(400);
    const link = page.getByRole('alert').getByRole('link', { name: 'Your name: Must be at most 100 characters' });
    await link.waitFor();
    expect(await page.getByRole('alert').getByRole('heading').textContent()).toBe('There is a problem');
    expect(await page.locator('#e-name').textContent()).toBe('Error: Must be at most 100 characters');
    expect(await page.getByLabel('Your name').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('[aria-invalid="true"]').count()).toBe(1);
    expect(await focused()).toBe('form-error');
    await link.click();
    expect(await focused()).toBe('f-name');
    expect(await t.db.formSubmission.count({ where: { formId } })).toBe(0);
    expect(errors.filter((e) => !e.includes('400'))).toEqual([]); // the refused request itself is logged by Chromium
  });

  it('embedded in an <iframe> on another site, the form works and records that site as the referrer', async () => {
    const formId = await newForm({ successMessage: 'Embedded thanks' });
    // The embedding site is a real loopback server: Chromium blocks a public page from framing a loopback one.
    const site = createServer((_req, res) => {
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      res.end(`<!doctype html><title>Site</title><h1>Our site</h1>
        <iframe src="${t.baseUrl}/forms/${formId}" title="Contact form" width="600" height="700"></iframe>`);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    try {
      // `localhost` vs the app's 127.0.0.1: another origin, so frame-ancestors is really exercised.
      const siteUrl = `http://localhost:${(site.address() as AddressInfo).port}/`;
      await page.goto(siteUrl);
      const frame = page.frameLocator('iframe');
      const email = `${unique('ada')}@example.com`;
      await frame.getByLabel('Your name').fill('Ada');
      await frame.getByLabel('E-mail').fill(email);
      await frame.getByLabel('I agree to be contacted').check();
      await frame.getByRole('button', { name: 'Send' }).click();
      await frame.getByRole('status').getByText('Embedded thanks').waitFor({ timeout: 10_000 });
      const submission = await t.db.formSubmission.findFirst({ where: { formId } });
      expect(submission).toMatchObject({ referrer: siteUrl, page: `${t.baseUrl}/forms/${formId}` });
      expect(await t.db.contact.count({ where: { accountId: acc.id, email } })).toBe(1);
    } finally {
      await new Promise((resolve) => site.close(resolve));
    }
  });

  it('with a redirect URL, a successful submit follows it', async () => {
    const target = 'https://thanks.example.test/done';
    const formId = await newForm({ redirectUrl: target });
    // The redirect's own page is served by the browser itself: the test needs no outside network.
    await page.route(`${target}*`, (route) => route.fulfill({ contentType: 'text/html', body: '<h1>Thank you</h1>' }));
    const email = `${unique('alan')}@example.com`;
    await page.goto(`${t.baseUrl}/forms/${formId}`);
    await fill(email);
    await Promise.all([page.waitForURL(target, { timeout: 10_000 }), page.getByRole('button', { name: 'Send' }).click()]);
    expect(await page.locator('h1').textContent()).toBe('Thank you');
    expect(await t.db.contact.count({ where: { accountId: acc.id, email } })).toBe(1);
  });
});
