// The docs are one place per fact, linked from the code, the tests and each other
// (docs/README.md): every such link must land on a file and heading that exist.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SKIP = new Set(['node_modules', '.git', 'generated', 'dist', '.data']);

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    SKIP.has(e.name) ? [] : e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)],
  );
}

/** Lines outside fenced code blocks. */
const prose = (text: string) => {
  let fenced = false;
  return text.split('\n').map((line) => (/^```/.test(line) ? ((fenced = !fenced), '') : fenced ? '' : line));
};

/** GitHub's heading anchors: lower case, punctuation dropped, spaces as `-`, repeats numbered; plus `<a id>`. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose(readFileSync(file, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading !== undefined) {
      const slug = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '').trim().toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      anchors.add(n ? `${slug}-${n}` : slug);
    }
    for (const [, id] of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id!);
  }
  return anchors;
}

/** What is wrong with a link to `target` from `from` (a file), or null. */
function broken(from: string, target: string): string | null {
  const [file, anchor] = target.split('#');
  const resolved = file ? path.resolve(path.dirname(from), file) : from;
  if (!existsSync(resolved)) return 'no such file';
  return anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor) ? 'no such heading' : null;
}

const docsMentions = /(?<![\w/.])docs\/([a-z0-9-]+\.md)(#[a-z0-9-]+)?/g;

describe('links into the docs', () => {
  it('every relative link in docs/, README.md, SECURITY.md and BENCHMARKS*.md lands on an existing file and heading', () => {
    // BENCHMARKS-<date>.md: the earlier runs, moved beside BENCHMARKS.md (its "Earlier runs").
    const benchmarks = readdirSync(ROOT).filter((f) => /^BENCHMARKS(-[\d-]+)?\.md$/.test(f));
    const markdown = [...files(path.join(ROOT, 'docs')), ...['README.md', 'SECURITY.md', ...benchmarks].map((f) => path.join(ROOT, f))].filter(
      (f) => f.endsWith('.md') && existsSync(f),
    );
    const problems = markdown.flatMap((file) =>
      prose(readFileSync(file, 'utf8')).flatMap((line, i) => [
        ...[...line.matchAll(/\]\(([^)\s]+)\)/g)].map(([, target]) => target!).filter((t) => !/^(https?:|mailto:)/.test(t))
          .map((target) => [target, broken(file, target)] as const),
        ...[...line.matchAll(docsMentions)].map(([, doc, anchor]) => [`docs/${doc}${anchor ?? ''}`, broken(path.join(ROOT, 'x'), `docs/${doc}${anchor ?? ''}`)] as const),
      ].flatMap(([target, why]) => (why ? [`${path.relative(ROOT, file)}:${i + 1} ${target}: ${why}`] : []))),
    );
    expect(problems).toEqual([]);
  });

  it('every docs/<file>.md#<heading> cited in src/, test/, scripts/, prisma/ and .ci/ exists', () => {
    const problems = ['src', 'test', 'scripts', 'prisma', '.ci'].flatMap((dir) =>
      files(path.join(ROOT, dir)).flatMap((file) =>
        readFileSync(file, 'utf8').split('\n').flatMap((line, i) =>
          [...line.matchAll(docsMentions)].flatMap(([, doc, anchor]) => {
            const why = broken(path.join(ROOT, 'x'), `docs/${doc}${anchor ?? ''}`);
            return why ? [`${path.relative(ROOT, file)}:${i + 1} docs/${doc}${anchor ?? ''}: ${why}`] : [];
          }),
        ),
      ),
    );
    expect(problems).toEqual([]);
  });

  it('every decisions § cited in src/, test/, scripts/ and docs/ is a section of docs/decisions.md', () => {
    const sections = new Set([...readFileSync(path.join(ROOT, 'docs/decisions.md'), 'utf8').matchAll(/<a id="s(\d+)"/g)].map(([, n]) => n));
    const cited = new Set(['src', 'test', 'scripts', 'docs'].flatMap((dir) => files(path.join(ROOT, dir)).flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/§(\d+)/g)].map(([, n]) => n!))));
    expect([...cited].filter((n) => !sections.has(n))).toEqual([]);
  });

  // The docs said "§1–§19" when §20, §21 and §24 existed: a range from §1 names every section.
  it('a range of decisions from §1 ("§1–§N and §M") names every section of docs/decisions.md, and no other', () => {
    const sections = [...readFileSync(path.join(ROOT, 'docs/decisions.md'), 'utf8').matchAll(/<a id="s(\d+)"/g)].map(([, n]) => Number(n));
    const markdown = [...files(path.join(ROOT, 'docs')), path.join(ROOT, 'README.md')].filter((f) => f.endsWith('.md'));
    const ranges = markdown.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/§1[–-]§(\d+)((?:,? and §\d+|, §\d+)*)/g)].map(([text, last, more]) => {
        const named = Array.from({ length: Number(last) }, (_, i) => i + 1).concat([...more!.matchAll(/§(\d+)/g)].map(([, n]) => Number(n)));
        return { where: `${path.relative(ROOT, file)}: ${text}`, named: named.filter((n) => sections.includes(n)).length === named.length && named.length === sections.length };
      }),
    );
    expect(ranges.length).toBeGreaterThan(0);
    expect(ranges.filter((r) => !r.named).map((r) => r.where)).toEqual([]);
  });
});
