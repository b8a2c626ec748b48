/**
 * Each example of the OpenAPI document validates against its own schema (docs/decisions.md §26):
 * every `example` beside a `schema` (media types, parameters, headers), every value of an `examples`
 * map, and every schema's own `examples` / `example`, checked by ajv (JSON Schema 2020-12, the
 * dialect of OpenAPI 3.1, formats included) against the schema it illustrates, `$ref`s resolved
 * in the document itself. A CSV example (`text/csv`) is a string to JSON Schema, so it is also read
 * as CSV: RFC 4180 records ending in CRLF, each with as many cells as its header row.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../src/rest/openapi.js';
import { CSV_COLUMNS } from '../../src/exports/contacts-csv.js';

type Doc = Record<string, any>;
type Example = { where: string; schema: string[]; value: unknown; mediaType?: string };

const pointer = (parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** Every example of the document, with the JSON pointer of the schema it illustrates. */
function examplesOf(doc: Doc): Example[] {
  const found: Example[] = [];
  const walk = (node: unknown, path: string[]) => {
    if (Array.isArray(node)) return node.forEach((item, i) => walk(item, [...path, String(i)]));
    if (!node || typeof node !== 'object') return;
    const object = node as Record<string, any>;
    const mediaType = path.at(-2) === 'content' ? path.at(-1) : undefined;
    if ('schema' in object) {
      // A media type, parameter or header: its example(s) illustrate its `schema`.
      if ('example' in object) found.push({ where: pointer(path), schema: [...path, 'schema'], value: object.example, mediaType });
      if (object.examples && typeof object.examples === 'object' && !Array.isArray(object.examples)) {
        for (const [name, example] of Object.entries(object.examples as Record<string, { value?: unknown }>)) {
          if ('value' in example) found.push({ where: `${pointer(path)} examples.${name}`, schema: [...path, 'schema'], value: example.value, mediaType });
        }
      }
    } else if (path.length > 0 && path.at(-1) !== 'examples') {
      // A schema: its own `examples` (2020-12) and `example` (OpenAPI's) illustrate it.
      if (Array.isArray(object.examples)) object.examples.forEach((value: unknown, i: number) => found.push({ where: `${pointer(path)} examples[${i}]`, schema: path, value }));
      if ('example' in object && typeof object.type === 'string') found.push({ where: `${pointer(path)} example`, schema: path, value: object.example });
    }
    for (const [key, value] of Object.entries(object)) walk(value, [...path, key]);
  };
  walk(doc, []);
  return found;
}

/** RFC 4180 records: cells split on commas outside quotes, `""` a quote inside a quoted cell. Null: not CSV. */
function csvRecords(text: string): string[][] | null {
  const records: string[][] = [];
  let cells: string[] = [];
  let cell = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"' && cell === '') {
      const end = /^"((?:[^"]|"")*)"/.exec(text.slice(i));
      if (!end) return null;
      cell = end[1]!.replace(/""/g, '"');
      i += end[0].length;
      if (i < text.length && text[i] !== ',' && !text.startsWith('\r\n', i)) return null;
      continue;
    }
    if (text[i] === ',') {
      cells.push(cell);
      cell = '';
      i++;
    } else if (text.startsWith('\r\n', i)) {
      records.push([...cells, cell]);
      cells = [];
      cell = '';
      i += 2;
    } else if (text[i] === '\r' || text[i] === '\n' || text[i] === '"') return null;
    else cell += text[i++];
  }
  if (cells.length > 0 || cell !== '') return null; // the last record ends in CRLF too (docs/faults.md)
  return records;
}

/** What is wrong with a CSV example: not CSV, or a record whose cells are not as many as its header's. */
function csvProblems(text: unknown): string[] {
  if (typeof text !== 'string') return ['not a string'];
  const records = csvRecords(text);
  if (!records) return ['not RFC 4180 CSV ending in CRLF'];
  if (records.length < 2) return ['no row under its header'];
  const width = records[0]!.length;
  return records.slice(1).flatMap((cells, i) => (cells.length === width ? [] : [`row ${i + 1} has ${cells.length} cells, its header ${width}`]));
}

let doc: Doc;
let ajv: Ajv2020;
const problemsOf = (example: Example): string[] => {
  const validate = ajv.getSchema(`openapi.json#/${pointer(example.schema)}`) ?? ajv.compile({ $ref: `openapi.json#/${pointer(example.schema)}` });
  const found = validate(example.value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
  return example.mediaType === 'text/csv' ? [...found, ...csvProblems(example.value)] : found;
};

beforeAll(() => {
  doc = buildOpenApi({ cookieName: 'session', serverUrl: 'http://127.0.0.1:3000' });
  ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats.default(ajv);
  ajv.addSchema({ ...structuredClone(doc), $id: 'openapi.json' });
});

describe('the examples of the OpenAPI document', () => {
  it('each validates against its own schema (and a CSV one reads as CSV, every row as wide as its header)', () => {
    const examples = examplesOf(doc);
    // Every 4xx/5xx answer has one; the downloads, the import's file and the stated rules' values too.
    expect(examples.length).toBeGreaterThan(400);
    expect(examples.filter((e) => e.mediaType === 'text/csv').map((e) => e.where)).toEqual(
      expect.arrayContaining([expect.stringContaining('contacts~1export'), expect.stringContaining('imports~1{id}~1errors'), expect.stringContaining('~1api~1v1~1imports/post/requestBody')]),
    );
    const failing = examples.flatMap((example) => problemsOf(example).map((problem) => `${example.where}: ${problem}`));
    expect(failing).toEqual([]);
  });

  it('the contacts export example has a cell for each of its columns (the header is the export\'s own)', () => {
    const example = doc.paths['/api/v1/contacts/export'].get.responses['200'].content['text/csv'].example as string;
    const [header, row] = csvRecords(example)!;
    expect(header).toEqual(CSV_COLUMNS);
    expect(row).toHaveLength(CSV_COLUMNS.length);
  });

  it('the check finds an example that does not match (a wrong message, a missing field, a short CSV row)', () => {
    const broken = structuredClone(doc);
    const wrongError = broken.paths['/api/v1/contacts'].get.responses['401'].content['application/json'];
    wrongError.example = { error: 'Nope' };
    const noDetails = broken.paths['/api/v1/contacts'].post.responses['400'].content['application/json'];
    noDetails.example = { error: 'Invalid payload' };
    const csv = broken.paths['/api/v1/contacts/export'].get.responses['200'].content['text/csv'];
    csv.example = 'A,B,C\r\n1,2\r\n';
    const examples = examplesOf(broken);
    const at = (where: string) => examples.find((e) => e.where === where)!;
    ajv.removeSchema('openapi.json');
    ajv.addSchema({ ...structuredClone(broken), $id: 'openapi.json' });
    try {
      expect(problemsOf(at(pointer(['paths', '/api/v1/contacts', 'get', 'responses', '401', 'content', 'application/json'])))).not.toEqual([]);
      expect(problemsOf(at(pointer(['paths', '/api/v1/contacts', 'post', 'responses', '400', 'content', 'application/json'])))).not.toEqual([]);
      expect(problemsOf(at(pointer(['paths', '/api/v1/contacts/export', 'get', 'responses', '200', 'content', 'text/csv'])))).toEqual(['row 1 has 2 cells, its header 3']);
    } finally {
      ajv.removeSchema('openapi.json');
      ajv.addSchema({ ...structuredClone(doc), $id: 'openapi.json' });
    }
  });
});
