import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The service's internal columns, derived from prisma/schema.prisma against what the API declares
 * (docs/decisions.md §26, "No secret leaves in an export"), so a new column is judged the day it is added.
 *
 * - `undeclared`: every column (snake_case, as stored) that neither the OpenAPI document names as a
 *   property or parameter anywhere nor the GraphQL schema has as a field. No REST answer carries
 *   such a key, at any depth (event payloads and other open objects included).
 * - `internal`, per table: the undeclared columns that are bookkeeping or secrets by what the schema
 *   says of them: an order key (its `///` comment says so), a lease or claim (`lease`, `locked`),
 *   a counter's slot, or a secret's stored form (`*_secret`, `*_token`, `*_hash` of a secret,
 *   `*_ciphertext`). The account export, which otherwise carries every column, carries none of these.
 */
export type Column = { table: string; name: string; comment: string; type: string };

const ROOT = path.resolve(import.meta.dirname, '../..');

export function prismaColumns(schemaText = readFileSync(path.join(ROOT, 'prisma/schema.prisma'), 'utf8')): Column[] {
  const models = new Set([...schemaText.matchAll(/^model (\w+)/gm)].map((m) => m[1]!));
  const columns: Column[] = [];
  for (const [, , body] of schemaText.matchAll(/^model (\w+) \{([\s\S]*?)^\}/gm)) {
    const table = /@@map\("(\w+)"\)/.exec(body!)?.[1];
    if (!table) continue;
    let comment = '';
    for (const line of body!.split('\n')) {
      const trimmed = line.trim();
      if (trimmed.startsWith('///')) {
        comment += `${trimmed.slice(3).trim()} `;
        continue;
      }
      const field = /^(\w+)\s+(\w+)(\[\])?\??(.*)$/.exec(trimmed);
      if (field && !trimmed.startsWith('@@') && !trimmed.startsWith('//') && !models.has(field[2]!) && !/@relation\b/.test(field[4]!)) {
        columns.push({ table, name: /@map\("(\w+)"\)/.exec(field[4]!)?.[1] ?? field[1]!, comment: comment.trim(), type: field[2]! });
      }
      comment = '';
    }
  }
  return columns;
}

/** Every property and parameter name the OpenAPI document declares, anywhere in it. */
export function declaredNames(doc: unknown): Set<string> {
  const names = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'properties' && value && typeof value === 'object' && !Array.isArray(value)) Object.keys(value).forEach((n) => names.add(n));
      if (key === 'required' && Array.isArray(value)) value.forEach((n) => typeof n === 'string' && names.add(n));
      if (key === 'parameters' && Array.isArray(value)) value.forEach((p: { name?: string }) => p.name && names.add(p.name));
      walk(value);
    }
  };
  walk(doc);
  return names;
}

/** Every field name of the GraphQL schema (schema.graphql, printed by `npm run generate`), snake_case. */
export function graphqlFieldNames(sdl = readFileSync(path.join(ROOT, 'schema.graphql'), 'utf8')): Set<string> {
  const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  return new Set([...sdl.matchAll(/^\s+(\w+)\s*[(:]/gm)].map((m) => snake(m[1]!)));
}

const SECRET = /(^|_)(secret|token)(_hash)?$|_ciphertext$/;
const BOOKKEEPING = (c: Column) => /\border key\b|\bsort key\b|\blease\b/i.test(c.comment) || /(^|_)(lease|locked)(_|$)|(^|_)slot$/.test(c.name);

export function internalColumns(doc: unknown) {
  const columns = prismaColumns();
  const declared = declaredNames(doc);
  const fields = graphqlFieldNames();
  const undeclaredColumns = columns.filter((c) => !declared.has(c.name) && !fields.has(c.name));
  const internal = new Map<string, Set<string>>();
  for (const c of undeclaredColumns.filter((c) => SECRET.test(c.name) || BOOKKEEPING(c))) {
    internal.set(c.table, (internal.get(c.table) ?? new Set()).add(c.name));
  }
  return { undeclared: new Set(undeclaredColumns.map((c) => c.name)), internal, columns };
}
