// `npm run bench -- --before <dir>`: when the older checkout's answer counts as the same request
// (measured) and when not (a status or rows of its own: an option it did not have).
import { describe, expect, it } from 'vitest';
import { compareAnswers, type Answer } from '../../scripts/bench/answers.js';

const row = (id: string) => ({ id, first_name: 'Ada', created_at: '2026-11-01T00:00:00.000Z' });
const list = (ids: string[], extra: Record<string, unknown> = {}): Answer => ({ status: 200, body: { data: ids.map(row), total: 500, page: 1, page_size: 25, ...extra } });

describe('compareAnswers (bench --before)', () => {
  it('the same rows and total: measured; key order does not matter', () => {
    const reordered: Answer = { status: 200, body: { total: 500, page_size: 25, page: 1, data: ['a', 'b'].map((id) => ({ created_at: '2026-11-01T00:00:00.000Z', first_name: 'Ada', id })) } };
    expect(compareAnswers(list(['a', 'b']), reordered, 'list')).toEqual({ measure: true, check: 'ok' });
  });

  it('a field only one answers (next_cursor added since) is named, the rest compared', () => {
    expect(compareAnswers(list(['a', 'b'], { next_cursor: 'xyz' }), list(['a', 'b']), 'list'))
      .toEqual({ measure: true, check: 'same data; not compared: next_cursor (after only)' });
  });

  it('other rows (a cursor the old code ignores): not measured, the first differing row named', () => {
    const result = compareAnswers(list(['x', 'y'], { next_cursor: 'c' }), list(['a', 'b']), 'list');
    expect(result.measure).toBe(false);
    expect(result.check).toContain('row 0: id x / a');
  });

  it('another status (a route or credential it did not have): not measured', () => {
    expect(compareAnswers(list(['a']), { status: 401, body: { error: 'Unauthorized' } }, 'list').measure).toBe(false);
  });

  it('GraphQL: extensions aside; errors are never the same answer', () => {
    const data = { data: { contacts: { total: 2, nodes: [{ id: 'a' }] } } };
    expect(compareAnswers({ status: 200, body: { ...data, extensions: { cost: 3 } } }, { status: 200, body: data }, 'graphql')).toEqual({ measure: true, check: 'ok' });
    expect(compareAnswers({ status: 200, body: data }, { status: 200, body: { errors: [{ message: 'Unknown argument "cursor"' }] } }, 'graphql').measure).toBe(false);
  });
});
