// bench --before (run.ts): whether an older checkout's answer to a case is the same as this one's,
// so its numbers are numbers of the same work.

export type Answer = { status: number; body: Record<string, unknown> };

/**
 * The --before service's answer against this one's: the same status and the same data, GraphQL
 * `extensions` aside and fields only one of them answers (a field added since, such as
 * `next_cursor`) named, not compared. `measure`: false when they differ (an option the old
 * checkout did not have), with how in `check`.
 */
export function compareAnswers(mine: Answer, theirs: Answer, kind: 'list' | 'write' | 'graphql'): { measure: boolean; check: string } {
  if (theirs.status !== mine.status) return { measure: false, check: `before answered ${theirs.status}: ${JSON.stringify(theirs.body).slice(0, 200)}` };
  if (theirs.body?.errors || mine.body?.errors) return { measure: false, check: `before answered ${JSON.stringify(theirs.body).slice(0, 300)}` };
  const only = new Set<string>();
  const [x, y] = sharedFields(withoutExtensions(mine.body), withoutExtensions(theirs.body), '', only);
  const fields = only.size ? `; not compared: ${[...only].join(', ')}` : '';
  if (canonical(x) === canonical(y)) return { measure: true, check: only.size ? `same data${fields}` : 'ok' };
  const [a, b] = [x as { total?: number; data?: unknown[] }, y as { total?: number; data?: unknown[] }];
  if (kind === 'list' && Array.isArray(a.data) && Array.isArray(b.data)) {
    const row = a.data.findIndex((r, i) => canonical(r) !== canonical(b.data![i]));
    return { measure: false, check: `different data: total ${a.total} / before ${b.total}, ${a.data.length} / ${b.data.length} rows` + (row >= 0 ? `, row ${row}: id ${(a.data[row] as { id?: string })?.id} / ${(b.data[row] as { id?: string })?.id}` : '') + fields };
  }
  return { measure: false, check: `different data: ${canonical(x).slice(0, 300)} / before ${canonical(y).slice(0, 300)}${fields}` };
}

/** `a` and `b` (JSON) with only the object fields both have; the others' paths into `only`. */
function sharedFields(a: unknown, b: unknown, at: string, only: Set<string>): [unknown, unknown] {
  if (Array.isArray(a) && Array.isArray(b)) {
    const pairs = Array.from({ length: Math.max(a.length, b.length) }, (_, i) => sharedFields(a[i], b[i], at, only));
    return [pairs.map((p) => p[0]).slice(0, a.length), pairs.map((p) => p[1]).slice(0, b.length)];
  }
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object' || Array.isArray(a) || Array.isArray(b)) return [a, b];
  const [x, y] = [a as Record<string, unknown>, b as Record<string, unknown>];
  const p: Record<string, unknown> = {};
  const q: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(x), ...Object.keys(y)])) {
    if (!(key in y)) only.add(`${at}${key} (after only)`);
    else if (!(key in x)) only.add(`${at}${key} (before only)`);
    // Cursors are opaque and their encoding may change (signed since docs/decisions.md §24): the rows say where a page ends.
    else if (/cursor$/i.test(key) && typeof x[key] === 'string' && typeof y[key] === 'string') only.add(`${at}${key} (opaque)`);
    else [p[key], q[key]] = sharedFields(x[key], y[key], `${at}${key}.`, only);
  }
  return [p, q];
}

const withoutExtensions = (body: unknown) => {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  const { extensions: _metadata, ...rest } = body as Record<string, unknown>;
  return rest;
};

/** JSON with every object's keys sorted: two versions may order the same fields differently. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([p], [q]) => (p < q ? -1 : 1))) : v)) ?? 'undefined';
}

