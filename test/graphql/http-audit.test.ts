// The GraphQL over HTTP server audit of graphql-http (`serverAudits`): the check client libraries and
// integrators run against a GraphQL endpoint. Every audit is a test named after its rule.
import { serverAudits } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

describe('GraphQL over HTTP (graphql-http server audit)', () => {
  for (const audit of serverAudits({ url: () => `${t.baseUrl}/graphql`, fetchFn: fetch })) {
    it(audit.name, async () => {
      const result = await audit.fn();
      const body = result.status === 'ok' ? '' : await result.response.clone().text().catch(() => '');
      expect({ status: result.status, reason: result.status === 'ok' ? undefined : `${result.reason} (answered ${result.response.status}: ${body.slice(0, 300)})` }).toEqual({ status: 'ok', reason: undefined });
    });
  }
});
