// The curl examples of README.md and docs/rest.md and their documented answers, as docs/rest.md
// "How the examples are tested" describes: read from the markdown, compared with what curl prints.

export type Answer = { lang: 'json' | 'http' | 'text'; text: string; line: number };
export type Example = { line: number; script: string; answer: Answer | null };

const FENCE = /^```\s*([\w-]*)\s*$/;

/** Every ```sh / ```bash block that runs curl, with the answer block right after it (blank lines between allowed). */
export function examplesOf(markdown: string): Example[] {
  const blocks: { lang: string; text: string; line: number; end: number }[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    blocks.push({ lang: open[1]!.toLowerCase(), text: body.join('\n'), line: start + 1, end: i });
  }
  const examples: Example[] = [];
  blocks.forEach((block, index) => {
    if (!['sh', 'bash'].includes(block.lang) || !/(^|[\s|$(])curl\s/m.test(block.text)) return;
    const next = blocks[index + 1];
    const adjacent = next && lines.slice(block.end + 1, next.line - 1).every((l) => l.trim() === '');
    const answer = adjacent && ['json', 'http', 'text'].includes(next.lang) ? { lang: next.lang as Answer['lang'], text: next.text, line: next.line } : null;
    examples.push({ line: block.line, script: block.text, answer });
  });
  return examples;
}

// ---- Patterns: JSON with `...` ----

const ELLIPSIS = Symbol('...');
type Pattern = null | boolean | number | string | typeof ELLIPSIS | Pattern[] | { [key: string]: Pattern; [ELLIPSIS]?: true };

const TIMESTAMP = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g;

/** A string of an answer as a regular expression: `...` and `<placeholder>` match any text, a timestamp any timestamp. */
export function globOf(text: string): RegExp {
  const parts = text.split(/(\.\.\.|<[a-z_ -]+>|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)/i);
  const source = parts
    .map((part, i) => (i % 2 === 0 ? part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : TIMESTAMP.source.startsWith(part) || /^\d{4}-/.test(part) ? TIMESTAMP.source : '[\\s\\S]*'))
    .join('');
  return new RegExp(`^${source}$`);
}

/** Parses an answer's JSON with `...` in it: one or more values, one after another. */
export function parsePatterns(text: string): Pattern[] {
  let at = 0;
  const fail = (what: string): never => {
    throw new Error(`answer block: ${what} at ${JSON.stringify(text.slice(at, at + 30))}`);
  };
  const space = () => {
    while (at < text.length && /\s/.test(text[at]!)) at++;
  };
  const value = (): Pattern => {
    space();
    if (text.startsWith('...', at)) return (at += 3), ELLIPSIS;
    const c = text[at];
    if (c === '{') {
      at++;
      const object: Record<string, Pattern> & { [ELLIPSIS]?: true } = {};
      space();
      if (text[at] === '}') return at++, object;
      for (;;) {
        space();
        if (text.startsWith('...', at)) {
          at += 3;
          object[ELLIPSIS] = true;
        } else {
          const key = value();
          if (typeof key !== 'string') fail('a key');
          space();
          if (text[at++] !== ':') fail('":"');
          object[key as string] = value();
        }
        space();
        if (text[at] === ',') at++;
        else if (text[at] === '}') return at++, object;
        else fail('"," or "}"');
      }
    }
    if (c === '[') {
      at++;
      const array: Pattern[] = [];
      space();
      if (text[at] === ']') return at++, array;
      for (;;) {
        array.push(value());
        space();
        if (text[at] === ',') at++;
        else if (text[at] === ']') return at++, array;
        else fail('"," or "]"');
      }
    }
    const literal = /^(?:"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null)/.exec(text.slice(at));
    if (!literal) return fail('a value');
    at += literal[0].length;
    return JSON.parse(literal[0]) as Pattern;
  };
  const values: Pattern[] = [];
  for (space(); at < text.length; space()) values.push(value());
  return values;
}

/** The JSON values curl printed, one after another (`curl -s` adds no line break between two). */
export function jsonValuesOf(output: string): unknown[] {
  const values: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < output.length; i++) {
    const c = output[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') {
      if (depth++ === 0) start = i;
    } else if ((c === '}' || c === ']') && --depth === 0) values.push(JSON.parse(output.slice(start, i + 1)));
    else if (depth === 0 && !/\s/.test(c!)) throw new Error(`not JSON: ${JSON.stringify(output.slice(i, i + 60))}`);
  }
  return values;
}

/** Where `actual` differs from the pattern, one line each; [] when it matches. */
export function mismatches(pattern: Pattern, actual: unknown, path = '$'): string[] {
  if (pattern === ELLIPSIS) return [];
  if (typeof pattern === 'string') {
    return typeof actual === 'string' && globOf(pattern).test(actual) ? [] : [`${path}: expected ${JSON.stringify(pattern)}, got ${JSON.stringify(actual)}`];
  }
  if (Array.isArray(pattern)) {
    if (!Array.isArray(actual)) return [`${path}: expected an array, got ${JSON.stringify(actual)}`];
    const open = pattern.at(-1) === ELLIPSIS;
    const items = open ? pattern.slice(0, -1) : pattern;
    if (open ? actual.length < items.length : actual.length !== items.length) return [`${path}: expected ${open ? 'at least ' : ''}${items.length} items, got ${actual.length}`];
    return items.flatMap((item, i) => mismatches(item, actual[i], `${path}[${i}]`));
  }
  if (pattern !== null && typeof pattern === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return [`${path}: expected an object, got ${JSON.stringify(actual)}`];
    const record = actual as Record<string, unknown>;
    const problems = Object.entries(pattern).flatMap(([key, value]) =>
      key in record ? mismatches(value, record[key], `${path}.${key}`) : [`${path}.${key}: missing`],
    );
    if (!pattern[ELLIPSIS]) for (const key of Object.keys(record)) if (!(key in pattern)) problems.push(`${path}.${key}: not in the documented answer`);
    return problems;
  }
  return Object.is(pattern, actual) ? [] : [`${path}: expected ${JSON.stringify(pattern)}, got ${JSON.stringify(actual)}`];
}

function jsonMismatches(expected: string, output: string, path = '$'): string[] {
  const patterns = parsePatterns(expected);
  const values = jsonValuesOf(output);
  if (patterns.length !== values.length) return [`${path}: expected ${patterns.length} JSON answer(s), got ${values.length}: ${output.slice(0, 300)}`];
  return patterns.flatMap((p, i) => mismatches(p, values[i], patterns.length > 1 ? `${path}#${i + 1}` : path));
}

/** HTTP answers (`curl -i`, `-D -`): status, then the headers the answer lists, then the body when it shows one. */
function httpMismatches(expected: string, output: string): string[] {
  const split = (text: string) => text.replace(/\r\n/g, '\n').split(/^(?=HTTP\/[\d.]+ \d{3})/m).filter((r) => r.trim() !== '');
  const want = split(expected);
  const got = split(output);
  if (want.length !== got.length) return [`expected ${want.length} HTTP answer(s), got ${got.length}: ${output.slice(0, 300)}`];
  return want.flatMap((w, i) => {
    const [wHead, ...wBody] = w.split(/\n\n/);
    const [gHead, ...gBody] = got[i]!.split(/\n\n/);
    const [wStatus, ...wHeaders] = wHead!.split('\n');
    const [gStatus, ...gHeaders] = gHead!.split('\n');
    const problems: string[] = [];
    const code = (line: string) => /^HTTP\/[\d.]+ (\d{3})/.exec(line)?.[1];
    if (code(wStatus!) !== code(gStatus!)) problems.push(`answer ${i + 1}: status ${gStatus}, documented ${wStatus}`);
    const headers = new Map(gHeaders.map((h) => [h.slice(0, h.indexOf(':')).trim().toLowerCase(), h.slice(h.indexOf(':') + 1).trim()]));
    for (const line of wHeaders.filter((l) => l.trim())) {
      const name = line.slice(0, line.indexOf(':')).trim().toLowerCase();
      const value = line.slice(line.indexOf(':') + 1).trim();
      if (!headers.has(name)) problems.push(`answer ${i + 1}: no ${name} header`);
      else if (!globOf(value).test(headers.get(name)!)) problems.push(`answer ${i + 1}: ${name}: ${headers.get(name)}, documented ${value}`);
    }
    const body = wBody.join('\n\n').trim();
    if (body) problems.push(...jsonMismatches(body, gBody.join('\n\n'), `answer ${i + 1} body`));
    return problems;
  });
}

/** Plain output, line by line (CRLF read as LF: the CSVs end lines so); a last line `...` lets more lines follow. */
function textMismatches(expected: string, output: string): string[] {
  const want = expected.split('\n');
  const got = output.replace(/\r\n/g, '\n').replace(/\n$/, '').split('\n');
  const open = want.at(-1) === '...';
  const lines = open ? want.slice(0, -1) : want;
  if (open ? got.length < lines.length : got.length !== lines.length) return [`expected ${lines.length} line(s), got ${got.length}: ${output.slice(0, 300)}`];
  return lines.flatMap((line, i) => (globOf(line).test(got[i]!) ? [] : [`line ${i + 1}: ${JSON.stringify(got[i])}, documented ${JSON.stringify(line)}`]));
}

/** Where what curl printed differs from the documented answer. */
export function answerMismatches(answer: Answer, output: string): string[] {
  if (answer.lang === 'json') return jsonMismatches(answer.text, output);
  if (answer.lang === 'http') return httpMismatches(answer.text, output);
  return textMismatches(answer.text, output);
}
