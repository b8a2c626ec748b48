import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeHtml } from '../../src/forms/form-page.js';
import { createAccount, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const PUBLIC = `query ($id: ID!) { publicLeadForm(id: $id) {
  id name successMessage honeypotField fields { key label type required options maxLength autocomplete } } }`;
const CREATE = `mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }`;
const SET_ACTIVE = `mutation ($id: ID!, $active: Boolean!) { setLeadFormActive(id: $id, active: $active) { id } }`;

const EVIL = `<script>alert("x")</script>&'`;

let t: TestApp;
let acc: TestAccount;
let formId: string;
let evilId: string;

async function newForm(input: Record<string, unknown>) {
  const r = await t.gql(CREATE, { input: { accountId: acc.id, name: unique('Form'), ...input } }, { as: acc.owner });
  expect(r.errors).toBeUndefined();
  return r.data.createLeadForm.id as string;
}

async function page(path: string, method = 'GET') {
  const response = await fetch(`${t.baseUrl}${path}`, { method });
  return { status: response.status, headers: response.headers, html: await response.text() };
}

beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  formId = await newForm({
    name: 'Contact us',
    successMessage: 'Thanks, talk soon',
    redirectUrl: 'https://example.com/thanks',
    honeypotField: 'website',
    fields: [
      { key: 'first', label: 'First name', type: 'text', required: true, mapsTo: 'first_name', maxLength: 80 },
      { key: 'mail', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' },
      { key: 'tel', label: 'Phone', type: 'phone', mapsTo: 'phone' },
      { key: 'plan', label: 'Plan', type: 'select', options: ['basic', 'pro'] },
      { key: 'note', label: 'Message', type: 'textarea' },
      { key: 'agree', label: 'I agree', type: 'checkbox', required: true },
      { key: 'campaign', label: 'Campaign', type: 'hidden' },
    ],
  });
  evilId = await newForm({
    name: EVIL,
    successMessage: EVIL,
    fields: [
      { key: 'first', label: EVIL, type: 'text', mapsTo: 'first_name' },
      { key: 'pick', label: 'Pick', type: 'select', options: [EVIL, '"><img src=x onerror=alert(1)>'] },
    ],
  });
});

afterAll(() => t?.close());

describe('Query.publicLeadForm', () => {
  it('anyone may read an active form: name, fields in order, success message, honeypot key', async () => {
    const r = await t.gql(PUBLIC, { id: formId }, { as: null });
    expect(r.errors).toBeUndefined();
    expect(r.data.publicLeadForm).toMatchObject({ id: formId, name: 'Contact us', successMessage: 'Thanks, talk soon', honeypotField: 'website' });
    expect(r.data.publicLeadForm.fields.map((f: { key: string }) => f.key)).toEqual(['first', 'mail', 'tel', 'plan', 'note', 'agree', 'campaign']);
    expect(r.data.publicLeadForm.fields[0]).toEqual({
      key: 'first', label: 'First name', type: 'text', required: true, options: [], maxLength: 80, autocomplete: 'given-name',
    });
    expect(r.data.publicLeadForm.fields[3]).toMatchObject({ options: ['basic', 'pro'], autocomplete: null });
  });

  it('a visitor never sees the account, the redirect or how fields map onto a contact', async () => {
    for (const [query, field] of [
      ['accountId', 'PublicLeadForm'], ['redirectUrl', 'PublicLeadForm'], ['active', 'PublicLeadForm'], ['mapsTo', 'PublicLeadFormField'],
    ] as const) {
      const document = field === 'PublicLeadForm'
        ? `query ($id: ID!) { publicLeadForm(id: $id) { ${query} } }`
        : `query ($id: ID!) { publicLeadForm(id: $id) { fields { ${query} } } }`;
      const r = await t.gql(document, { id: formId }, { as: null });
      expect(r.errors?.[0]?.message, query).toContain(`Cannot query field "${query}" on type "${field}"`);
    }
  });

  it('an inactive, unknown or malformed id is null, the same answer for each', async () => {
    const inactive = await newForm({ fields: [{ key: 'e', label: 'E', type: 'email', mapsTo: 'email' }] });
    await t.gql(SET_ACTIVE, { id: inactive, active: false }, { as: acc.owner });
    for (const id of [inactive, randomUUID(), 'not-a-uuid']) {
      const r = await t.gql(PUBLIC, { id }, { as: null });
      expect(r.errors, id).toBeUndefined();
      expect(r.data.publicLeadForm, id).toBeNull();
    }
  });
});

describe('GET /forms/{form_id}', () => {
  it('serves an HTML page with a label for every visible field and the right input types', async () => {
    const { status, headers, html } = await page(`/forms/${formId}`);
    expect(status).toBe(200);
    expect(headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(html).toMatch(/^<!doctype html>\n<html lang="en">/);
    expect(html).toContain('<title>Contact us</title>');
    expect(html).toMatch(/<label for="f-first"[^>]*>First name<span aria-hidden="true"> \*<\/span><\/label><input type="text" id="f-first" name="first" aria-describedby="e-first" aria-required="true" autocomplete="given-name" maxlength="80">/);
    expect(html).toMatch(/<input type="email" id="f-mail" name="mail"[^>]* aria-required="true" autocomplete="email"/);
    expect(html).toMatch(/<input type="tel" id="f-tel" name="tel"[^>]*autocomplete="tel"/);
    expect(html).toContain('<select id="f-plan" name="plan" aria-describedby="e-plan"><option value="">Choose…</option><option value="basic">basic</option><option value="pro">pro</option></select>');
    expect(html).toMatch(/<textarea id="f-note" name="note"[^>]*maxlength="1000"><\/textarea>/);
    expect(html).toMatch(/<input type="checkbox" value="yes" id="f-agree" name="agree"[^>]* aria-required="true">/);
    expect(html).toContain('<input type="hidden" name="campaign" value="" data-text="Campaign">');
    expect(html).toContain('data-action="/api/v1/forms/' + formId + '/submit"');
    // The page's own error path: no browser pop-up, and no `required` whose native validity would
    // announce an untouched select or checkbox as invalid (docs/forms.md).
    expect(html).toMatch(/<form id="lead-form" method="post" novalidate [^>]*data-form="[0-9a-f-]{36}"/);
    expect(html).not.toMatch(/<(input|select|textarea)[^>]* required[ >]/);
    expect(html.match(/aria-required="true"/g)).toHaveLength(3);
    expect(html.slice(html.indexOf('<main>'), html.indexOf('<script'))).not.toContain('aria-invalid'); // only the script sets it, once a field is touched
    expect(html).toMatch(/<div class="hp" aria-hidden="true">.*name="website" tabindex="-1" autocomplete="off">/);
    expect(html).not.toContain('https://example.com/thanks'); // the redirect stays server-side until a submit succeeds
    expect(html).not.toContain(acc.id);
  });

  it('a hidden field takes its value from the query string, escaped', async () => {
    const { html } = await page(`/forms/${formId}?campaign=${encodeURIComponent('spring"><b>')}`);
    expect(html).toContain('<input type="hidden" name="campaign" value="spring&quot;&gt;&lt;b&gt;" data-text="Campaign">');
  });

  it('has a strict Content-Security-Policy whose nonce is on the one script and style, and may be framed anywhere', async () => {
    const { headers, html } = await page(`/forms/${formId}`);
    const csp = headers.get('content-security-policy')!;
    const nonce = /script-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(csp).toBe(
      `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors *`,
    );
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html).toContain(`<style nonce="${nonce}">`);
    expect(html).not.toMatch(/ style=| on[a-z]+=|src=|href=/); // nothing inline outside the nonce, no external assets
    expect(headers.get('x-frame-options')).toBeNull();
    expect(headers.get('cache-control')).toBe('no-store');
    const again = await page(`/forms/${formId}`);
    expect(again.headers.get('content-security-policy')).not.toContain(nonce); // a new nonce per answer
  });

  it('escapes every string the form owner wrote', async () => {
    const { status, html } = await page(`/forms/${evilId}`);
    expect(status).toBe(200);
    const escaped = escapeHtml(EVIL);
    expect(escaped).toBe('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;');
    expect(html).toContain(`<title>${escaped}</title>`);
    expect(html).toContain(`<h1 id="form-title">${escaped}</h1>`);
    expect(html).toContain(`data-success="${escaped}"`);
    expect(html).toContain(`data-text="${escaped}">${escaped}</label>`);
    expect(html).toContain(`<option value="${escaped}">${escaped}</option>`);
    expect(html).toContain('<option value="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;">&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</option>');
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('<img');
  });

  it('an unknown, inactive or malformed form is a 404 HTML page that can still be framed', async () => {
    const inactive = await newForm({ fields: [{ key: 'e', label: 'E', type: 'email', mapsTo: 'email' }] });
    await t.gql(SET_ACTIVE, { id: inactive, active: false }, { as: acc.owner });
    for (const id of [inactive, randomUUID(), 'nope', '%E0%A4%A']) {
      const { status, headers, html } = await page(`/forms/${id}`);
      expect(status, id).toBe(404);
      expect(headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(headers.get('content-security-policy')).toMatch(/^default-src 'none'; style-src 'nonce-[^']+'; form-action 'self'; base-uri 'none'; frame-ancestors \*$/);
      expect(html).toContain('<h1>Form not found</h1>');
      expect(html).not.toContain('<script');
    }
  });

  it('HEAD answers like GET without a body; other methods are 405 with Allow', async () => {
    const head = await page(`/forms/${formId}`, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.html).toBe('');
    const post = await page(`/forms/${formId}`, 'POST');
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(post.html).toContain('<h1>Method not allowed</h1>');
  });
});
