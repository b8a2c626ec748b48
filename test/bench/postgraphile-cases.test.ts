// The bench's check of PostGraphile against the service (run.ts compare) reads both answers with
// summarize: these prove that a different page, total or nested page is told apart (CHECK FAILED).
import { describe, expect, it } from 'vitest';
import { summarize } from '../../scripts/bench/postgraphile-cases.js';

const rows = (n: number, extra: object = {}) => Array.from({ length: n }, (_, i) => ({ id: String(i), ...extra }));

describe('summarize (the PostGraphile check)', () => {
  it('reads the service REST page and PostGraphile page with the same rows and total alike', () => {
    const rest = { data: rows(25), total: 500, page: 1, page_size: 25 };
    const theirs = { data: { result: { totalCount: 500, nodes: rows(25) } } };
    expect(summarize(rest)).toBe('25 rows of 500');
    expect(summarize(theirs)).toBe(summarize(rest));
  });

  it('tells apart another total or another number of rows', () => {
    const rest = { data: rows(25), total: 500 };
    expect(summarize({ data: { result: { totalCount: 499, nodes: rows(25) } } })).not.toBe(summarize(rest));
    expect(summarize({ data: { result: { totalCount: 500, nodes: rows(24) } } })).not.toBe(summarize(rest));
  });

  it('counts the nested deals of the connection, so a different inner page is told apart', () => {
    const service = { data: { account: { contacts: { totalCount: 500, nodes: rows(50, { deals: { nodes: rows(2) } }) } } } };
    const same = { data: { result: { totalCount: 500, nodes: rows(50, { deals: { nodes: rows(2) } }) } } };
    const fewer = { data: { result: { totalCount: 500, nodes: rows(50, { deals: { nodes: rows(1) } }) } } };
    expect(summarize(service)).toBe('50 rows (100 deals) of 500');
    expect(summarize(same)).toBe(summarize(service));
    expect(summarize(fewer)).not.toBe(summarize(service));
  });

  it('reads a created contact from either answer, and an answer without data as nothing', () => {
    expect(summarize({ data: { id: 'a', first_name: 'Bench' } })).toBe('1 row');
    expect(summarize({ data: { result: { contact: { id: 'a' } } } })).toBe('1 row');
    expect(summarize({ data: { result: { contact: null } } })).toBeNull();
    expect(summarize({ errors: [{ message: 'boom' }], data: null })).toBeNull();
  });
});
