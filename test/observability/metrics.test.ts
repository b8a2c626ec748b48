import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// GET /metrics (src/observability/metrics.ts): Prometheus text, one registry per app, bounded labels.

let t: TestApp;
let acc: TestAccount;

beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t.close());

async function metrics(): Promise<string> {
  const r = await t.rest('GET', '/metrics');
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
  return r.text;
}

/** The value of one series, 0 when absent. */
function value(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe('metrics', () => {
  it('counts requests by route pattern and status, with a latency histogram', async () => {
    const ok = 'http_requests_total{method="GET",route="/api/v1/contacts",status="200"}';
    const denied = 'http_requests_total{method="GET",route="/api/v1/contacts",status="401"}';
    const before = await metrics();
    await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`, { as: acc.member });
    await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`, { as: acc.member });
    await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`);
    const after = await metrics();
    expect(value(after, ok) - value(before, ok)).toBe(2);
    expect(value(after, denied) - value(before, denied)).toBe(1);
    const count = 'http_request_duration_seconds_count{method="GET",route="/api/v1/contacts"}';
    expect(value(after, count) - value(before, count)).toBe(3);
  });

  it('labels stay bounded: no URL, id or client-chosen operation name becomes a label', async () => {
    await t.rest('GET', '/api/v1/no/such/path/1234');
    await t.rest('POST', '/api/v1/forms/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b/submit', { body: { data: {} }, clientIp: '192.0.2.50' });
    await t.gql('query SomethingOnlyThisClientCalls { me { id } }', {}, { as: acc.owner });
    const text = await metrics();
    expect(text).toContain('route="unmatched"');
    expect(text).toContain('route="/api/v1/forms/:form_id/submit"');
    expect(text).not.toContain('/api/v1/no/such');
    expect(text).not.toContain('0190a1b2');
    expect(text).not.toContain('SomethingOnlyThisClientCalls');
    expect(value(text, 'graphql_operation_duration_seconds_count{operation="anonymous",type="query"}')).toBeGreaterThan(0);
  });

  it('times GraphQL operations by name, REST routes included', async () => {
    const series = 'graphql_operation_duration_seconds_count{operation="ListDeals",type="query"}';
    const before = value(await metrics(), series);
    await t.rest('GET', `/api/v1/deals?account_id=${acc.id}`, { as: acc.member });
    expect(value(await metrics(), series) - before).toBe(1);
  });

  it('counts rate-limit rejections by rule', async () => {
    const series = 'rate_limit_rejections_total{rule="submitLeadForm"}';
    const before = value(await metrics(), series);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const r = await t.rest('POST', '/api/v1/forms/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b/submit', { body: { data: {} }, clientIp: '192.0.2.77' });
      statuses.push(r.status);
    }
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);
    expect(value(await metrics(), series) - before).toBe(2);
  });

  it('each app instance has its own registry', async () => {
    const other = createApp(t.deps);
    const text = await (await other.fetch('http://localhost/metrics')).text();
    expect(value(text, 'http_requests_total{method="GET",route="/api/v1/contacts",status="200"}')).toBe(0);
  });

  it('reports the PostgreSQL pool when the database has one, and nothing for PGlite', async () => {
    const pooled = createMetrics({ db: { pool: { totalCount: 4, idleCount: 3, waitingCount: 1 } } as never, config: {} });
    const text = await pooled.registry.metrics();
    expect(value(text, 'db_pool_connections')).toBe(4);
    expect(value(text, 'db_pool_idle_connections')).toBe(3);
    expect(value(text, 'db_pool_waiting_requests')).toBe(1);
    if (!('pool' in t.deps.db)) expect(await metrics()).not.toContain('db_pool_');
  });

  it('METRICS_TOKEN, when set, is required', async () => {
    const token = 'metrics-token-0123456789';
    const guarded = createApp({ ...t.deps, config: { ...t.deps.config, metricsToken: token } });
    expect((await guarded.fetch('http://localhost/metrics')).status).toBe(401);
    expect((await guarded.fetch('http://localhost/metrics', { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await guarded.fetch('http://localhost/metrics', { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  });
});
