import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { mintToken } from '../../src/auth/token.js';
import { DEMO, seedDemo } from '../../src/demo.js';
import { EXAMPLES } from '../../src/graphiql.js';
import { createTestApp, TEST_METRICS_TOKEN, TEST_SECRET, type TestApp } from '../helpers/app.js';

// GraphiQL at GET /graphql (Accept: text/html) outside production, self-contained (no CDN).

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** src/href attributes of the page's tags, script and style bodies left out. */
const tagUrls = (html: string) =>
  [...html.replace(/<script\b[^>]*>[\s\S]*?<\/script>/gi, (tag) => tag.slice(0, tag.indexOf('>') + 1))
    .replace(/<style\b[^>]*>[\s\S]*?<\/style>/gi, '')
    .matchAll(/<[a-z]+\b[^>]*?\b(?:src|href)\s*=\s*["']?([^"'\s>]+)/gi)].map((m) => m[1]!);

describe('GraphiQL', () => {
  it('GET /graphql with Accept text/html serves GraphiQL with no external script or style', async () => {
    const r = await t.rest('GET', '/graphql', { headers: { accept: 'text/html' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(r.text).toContain('renderYogaGraphiQL');
    expect(r.text).not.toMatch(/<script\b[^>]*\bsrc\s*=/i);
    for (const url of tagUrls(r.text)) expect(url).not.toMatch(/^(https?:)?\/\//i);
  });

  it('opens with example operations for internal tools', async () => {
    const r = await t.rest('GET', '/graphql', { headers: { accept: 'text/html' } });
    const names = ['query Me', 'query Contacts', 'query ContactsByCursor', 'query ContactWithRelations', 'mutation CreateContact', 'mutation SetDealStatus'];
    for (const name of names) expect(r.text).toContain(name);
  });

  // ContactsByCursor and ContactWithRelations use §11's reads (Account.contacts, Query.contact and the
  // Contact connections): this passes once those fields are in the schema.
  it('the examples are valid operations of the schema', async () => {
    const { EXAMPLES } = await import('../../src/graphiql.js');
    const { parse, validate } = await import('graphql/index.js');
    const { schema } = await import('../../src/schema.js');
    for (const tab of EXAMPLES) expect(validate(schema, parse(tab.query))).toEqual([]);
  });

  it('every example runs as it is against the seeded demo account: its variables hold the demo\'s fixed ids', async () => {
    await seedDemo(t.db, TEST_SECRET);
    const owner = { id: DEMO.ownerId, token: await mintToken(TEST_SECRET, { sub: DEMO.ownerId }) };
    for (const tab of EXAMPLES) {
      const r = await t.gql(tab.query, JSON.parse(tab.variables), { as: owner });
      expect(r.errors, tab.query.split('\n')[0]).toBeUndefined();
    }
    expect(EXAMPLES.map((tab) => tab.variables).join('\n')).not.toMatch(/</); // no placeholder like "<account id>"
  });

  it('is not served in production', async () => {
    const config = loadConfig({ NODE_ENV: 'production', AUTH_JWT_SECRET: TEST_SECRET, METRICS_TOKEN: TEST_METRICS_TOKEN });
    const app = createApp({ ...t.deps, config });
    const r = await app.fetch('http://localhost/graphql', { headers: { accept: 'text/html' } });
    const text = await r.text();
    expect(r.headers.get('content-type') ?? '').not.toMatch(/text\/html/);
    expect(text).not.toContain('<html');
  });
});
