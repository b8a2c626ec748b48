// How a contact matches a search (docs/decisions.md §3, §19). Every search reads one trigram GIN index
// on contact_search_text(first, last, e-mail, company, phone), a SQL function the migration
// 20261123195900_search defines once; PostgreSQL inlines it, so each query's expression is the
// index's. ILIKE '%x%' on that text yields the candidates, and each search then checks the fields it
// means (a candidate's match may straddle two fields). `%`, `_` and `\` match themselves.
import { Prisma } from '../generated/prisma/client.js';
import { likeEscape, PLANNED_EACH_TIME } from '../graphql/collection.js';

/** The ILIKE pattern of a substring. */
export const containing = (text: string) => `%${likeEscape(text)}%`;
/** The ILIKE pattern of a prefix. */
export const startingWith = (text: string) => `${likeEscape(text)}%`;

/** A column of the contact under `alias`. */
export const field = (alias: string, column: string) => Prisma.raw(`${alias}."${column}"`);
/** "first last": the name §3 searches, and the title of a contact's search hit. */
export const nameSql = (alias: string) => Prisma.sql`(${field(alias, 'first_name')} || ' ' || coalesce(${field(alias, 'last_name')}, ''))`;

const indexedText = (alias: string) =>
  Prisma.sql`contact_search_text(${Prisma.join(['first_name', 'last_name', 'email', 'company', 'phone'].map((c) => field(alias, c)))})`;
/** The indexed text matching a pattern; the statement is planned for each pattern (src/db/prepared.ts). */
const indexed = (alias: string, pattern: string) => Prisma.sql`${indexedText(alias)} ILIKE ${pattern} ${PLANNED_EACH_TIME}`;

/** §3: a substring of the first name, last name, e-mail or "first last". */
export function contactMatches(alias: string, text: string): Prisma.Sql {
  const p = containing(text);
  return Prisma.sql`(${indexed(alias, p)} AND (${nameSql(alias)} ILIKE ${p} OR ${field(alias, 'email')} ILIKE ${p}))`;
}

/** A substring of "first last": a deal's or an invoice's search by contact name (§19). */
export function nameMatches(alias: string, text: string): Prisma.Sql {
  const p = containing(text);
  return Prisma.sql`(${indexed(alias, p)} AND ${nameSql(alias)} ILIKE ${p})`;
}

/** The fields cross-object search reads (§19): name, e-mail, company and phone. */
export const searchedFields = (alias: string) => [nameSql(alias), ...['email', 'company', 'phone'].map((c) => field(alias, c))];

/** What ranks a contact's hit (§19): a field that is or begins with the query, the name's parts alone too. */
export const rankedFields = (alias: string) => [...searchedFields(alias), field(alias, 'first_name'), field(alias, 'last_name')];

/** The line under a contact's hit: its e-mail, else its company, else its phone. */
export const subtitleSql = (alias: string) => Prisma.sql`coalesce(${Prisma.join(['email', 'company', 'phone'].map((c) => Prisma.raw(`${alias}.${c}`)))})`;

/** §19's cross-object search: a substring of the name, e-mail, company or phone. */
export function anyFieldMatches(alias: string, text: string): Prisma.Sql {
  const p = containing(text);
  return Prisma.sql`(${indexed(alias, p)} AND (${Prisma.join(searchedFields(alias).map((f) => Prisma.sql`${f} ILIKE ${p}`), ' OR ')}))`;
}

/** Characters with a meaning in a regular expression (PostgreSQL's), escaped to match themselves. */
const regexEscape = (text: string) => text.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');

/**
 * Supersets of the contacts one of whose fields begins with the text, or is the text (§19's prefix
 * and exact matches), for the index to find: contact_search_text begins with the first name and
 * puts a space between fields. A regular expression is read from the index by the trigrams of a
 * word's start: 3 ms for a fragment inside 100,000 contacts of a million, against 20 ms for two
 * ILIKE patterns OR-ed. A word's end is read only from a space after it, not from `$`, hence the
 * phone, last in the text, as an ILIKE pattern of its own (BENCHMARKS.md, "Query.search in
 * bounded reads").
 */
export const anyFieldMayStartWith = (alias: string, text: string) => Prisma.sql`${indexedText(alias)} ~* ${`(^| )${regexEscape(text)}`} ${PLANNED_EACH_TIME}`;
export const anyFieldMayBe = (alias: string, text: string) =>
  Prisma.sql`(${indexedText(alias)} ~* ${`(^| )${regexEscape(text)} `} OR ${indexed(alias, `% ${likeEscape(text)}`)})`;

/**
 * The rows of `table` (under alias `t`) whose `column` or whose contact's name contains the text
 * (deals: title; invoices: number; §19): the union of two index reads, the table's own trigram
 * index and the contacts' joined by (account_id, contact_id), instead of testing every row.
 */
export function ownOrContactNameMatches(table: 'deals' | 'invoices', column: string, text: string): Prisma.Sql {
  const p = containing(text);
  const rows = Prisma.raw(`"${table}"`);
  return Prisma.sql`t.id IN (
    SELECT o.id FROM ${rows} o WHERE ${field('o', column)} ILIKE ${p}
    UNION ALL
    SELECT o.id FROM contacts k JOIN ${rows} o ON o.account_id = k.account_id AND o.contact_id = k.id WHERE ${nameMatches('k', text)})`;
}
