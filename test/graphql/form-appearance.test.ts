// A form's look on its public page: accent colour and title visibility, set on the form; the theme,
// chosen by the visitor's preference or forced with ?theme= (docs/embedding-forms.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const CREATE = `mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id accentColor showTitle } }`;
const PUBLIC = `query ($id: ID!) { publicLeadForm(id: $id) { accentColor showTitle } }`;
const FIELDS = [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' }];

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

const create = (input: Record<string, unknown>) =>
  t.gql(CREATE, { input: { accountId: acc.id, name: unique('Form'), fields: FIELDS, ...input } }, { as: acc.owner });
const html = async (path: string) => (await fetch(`${t.baseUrl}${path}`)).text();

describe('lead form appearance', () => {
  it('accentColor and showTitle are stored (colour in lower case) and public', async () => {
    const r = await create({ accentColor: '#C2185B', showTitle: false });
    expect(r.data.createLeadForm).toMatchObject({ accentColor: '#c2185b', showTitle: false });
    const pub = await t.gql(PUBLIC, { id: r.data.createLeadForm.id });
    expect(pub.data.publicLeadForm).toEqual({ accentColor: '#c2185b', showTitle: false });
  });

  it('by default a form has no accent of its own and shows its title', async () => {
    const r = await create({});
    expect(r.data.createLeadForm).toMatchObject({ accentColor: null, showTitle: true });
  });

  it.each(['blue', '#abc', '#12345g', 'rgb(0,0,0)', '#0b57d0;'])('accentColor %j is a 400 on accentColor', async (accentColor) => {
    const r = await create({ accentColor });
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { accentColor: ['Must be a colour written #rrggbb'] } });
  });

  it('the page uses the accent, and hides the title visually (it still labels the form) when showTitle is false', async () => {
    const id = (await create({ name: 'Talk to us', accentColor: '#ffd600', showTitle: false })).data.createLeadForm.id;
    const page = await html(`/forms/${id}`);
    expect(page).toContain('--accent:#ffd600;--on-accent:#000000');
    expect(page).toContain('<h1 id="form-title" class="visually-hidden">Talk to us</h1>');
    expect(page).toContain('aria-labelledby="form-title"');
  });

  it('?theme=light|dark forces a theme; anything else leaves it to the visitor\'s preference', async () => {
    const id = (await create({})).data.createLeadForm.id;
    expect(await html(`/forms/${id}?theme=dark`)).toContain('<html lang="en" data-theme="dark">');
    expect(await html(`/forms/${id}?theme=light`)).toContain('<html lang="en" data-theme="light">');
    expect(await html(`/forms/${id}?theme=%22%3E%3Cscript%3E`)).toContain('<html lang="en">\n');
    expect(await html(`/forms/${id}`)).toContain('@media (prefers-color-scheme:dark)');
    // The 404 page follows the forced theme too.
    expect(await html(`/forms/00000000-0000-4000-8000-000000000000?theme=dark`)).toContain('data-theme="dark"');
  });

  it('GET /forms/embed.js serves the embed snippet as cacheable JavaScript any site may load', async () => {
    const r = await fetch(`${t.baseUrl}/forms/embed.js`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(r.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(r.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect(await r.text()).toContain("event.origin !== origin || event.source !== frame.contentWindow");
  });
});
