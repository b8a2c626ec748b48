// The SQL of Query.search (docs/decisions.md §19, §21): per searchable type, how a row matches,
// how exactly, and what its hit says. Every match condition is read through a trigram index
// (contacts_search_trgm_idx, deals_title_trgm_idx, invoices_invoice_number_trgm_idx,
// companies_name_trgm_idx + companies_domain_trgm_idx, notes_body_trgm_idx, tasks_title_trgm_idx).
import { anyFieldMatches, anyFieldMayBe, anyFieldMayStartWith, containing, field, nameSql, rankedFields, startingWith, subtitleSql } from '../contacts/contact-search.js';
import { likeEscape, PLANNED_EACH_TIME } from '../graphql/collection.js';
import { Prisma } from '../generated/prisma/client.js';

export const SEARCH_TYPES = ['CONTACT', 'DEAL', 'INVOICE', 'COMPANY', 'NOTE', 'TASK'] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

/**
 * 0 when the query is one of `fields` whole (case-insensitive), 1 when one begins with it, else 2:
 * the rank of §19 (exact, prefix, substring).
 */
function rankSql(fields: Prisma.Sql[], query: string): Prisma.Sql {
  return Prisma.sql`CASE WHEN lower(CAST(${query} AS text)) IN (${Prisma.join(fields.map((f) => Prisma.sql`lower(${f})`))}) THEN 0
    WHEN ${Prisma.join(fields.map((f) => Prisma.sql`${f} ILIKE ${startingWith(query)}`), ' OR ')} THEN 1 ELSE 2 END`;
}

/** A record's name by the account and id `alias` holds in `column` (null when it has none). */
const nameOf = (table: 'contacts' | 'deals' | 'companies', name: Prisma.Sql, alias: string, column: string) =>
  Prisma.sql`(SELECT ${name} FROM ${Prisma.raw(table)} k WHERE k.account_id = ${field(alias, 'account_id')} AND k.id = ${field(alias, column)})`;
const contactName = (alias: string) => nameOf('contacts', Prisma.sql`btrim(${nameSql('k')})`, alias, 'contact_id');
/** What a note or a task is about: its contact's name, else its deal's title, else its company's name. */
const targetName = (alias: string) =>
  Prisma.sql`coalesce(${contactName(alias)}, ${nameOf('deals', Prisma.sql`k.title`, alias, 'deal_id')}, ${nameOf('companies', Prisma.sql`k.name`, alias, 'company_id')})`;

type Matching = { table: string; is: Prisma.Sql; startsWith: Prisma.Sql; contains: Prisma.Sql; rank: Prisma.Sql; title: Prisma.Sql; subtitle: Prisma.Sql };

/** A type matched in columns of its own (each with its trigram index): any of them is, begins with or holds the query. */
function own(table: string, columns: string[], query: string, title: Prisma.Sql, subtitle: Prisma.Sql): Matching {
  const any = (pattern: string) => Prisma.sql`(${Prisma.join(columns.map((c) => Prisma.sql`${field('r', c)} ILIKE ${pattern}`), ' OR ')}) ${PLANNED_EACH_TIME}`;
  return {
    table,
    is: any(likeEscape(query)),
    startsWith: any(startingWith(query)),
    contains: any(containing(query)),
    rank: rankSql(columns.map((c) => field('r', c)), query),
    title,
    subtitle,
  };
}

/** How a row of `type` (alias `r`) matches the query, how exactly, and what its hit says. */
export function matching(type: SearchType, query: string): Matching {
  switch (type) {
    case 'CONTACT':
      return {
        table: 'contacts',
        is: anyFieldMayBe('r', query),
        startsWith: anyFieldMayStartWith('r', query),
        contains: anyFieldMatches('r', query),
        rank: rankSql(rankedFields('r'), query),
        title: Prisma.sql`btrim(${nameSql('r')})`,
        subtitle: subtitleSql('r'),
      };
    // Deals and invoices match their own title or number here, not their contact's name: the contact is a hit of its own.
    case 'DEAL':
      return own('deals', ['title'], query, Prisma.sql`r.title`, contactName('r'));
    case 'INVOICE':
      return own('invoices', ['invoice_number'], query, Prisma.sql`r.invoice_number`, contactName('r'));
    case 'COMPANY':
      return own('companies', ['name', 'domain'], query, Prisma.sql`r.name`, Prisma.sql`r.domain`);
    // A note has no title: its body's first line that is not blank, cut at 100 characters, stands for one.
    case 'NOTE':
      return own('notes', ['body'], query, Prisma.sql`rtrim(left(substring(r.body from '\\S[^\r\n]*'), 100))`, targetName('r'));
    case 'TASK':
      return own('tasks', ['title'], query, Prisma.sql`r.title`, targetName('r'));
  }
}

/**
 * Query.search's statement: the best `first` hits over `types` (rank, newest first), each with its
 * title and subtitle. Every type is read in three bounded reads rather than ranked whole (a common
 * fragment matches a tenth of an account; BENCHMARKS.md, "Query.search in bounded reads"): the
 * newest `first` exact matches, the newest `first` exact or prefix ones, and the newest `first` of
 * all. The first two find their candidates through the trigram index by what a field may be or
 * begin; every read stops at `first` rows, so a walk of the account's newest rows (its (account_id,
 * created_at DESC, id DESC) index) serves a common fragment. Together they hold a type's best
 * `first`: with e exact matches in it, it needs the newest `first` - e prefix ones, and the newest
 * `first` exact or prefix matches hold at least that many (likewise for substring matches).
 *
 * The same holds across types, so a later kind of read runs only while the earlier ones found fewer
 * than `first` rows in all (a pseudo-constant condition: PostgreSQL skips the read outright): when
 * the exact matches fill the answer, no prefix or substring read runs (BENCHMARKS.md, "Query.search
 * stops at the reads that fill it"). Titles and subtitles (a name read from another table) are read
 * for the `first` rows kept, not for every candidate.
 */
export function searchSql(types: readonly SearchType[], account: Prisma.Sql, query: string, first: number): Prisma.Sql {
  const matchings = types.map((type) => ({ type, m: matching(type, query) }));
  /** One kind of read for every type: each type's newest `first` rows where `where` holds, run only if `gate` does. */
  const reads = (where: (m: Matching) => Prisma.Sql, gate: Prisma.Sql) =>
    Prisma.join(
      matchings.map(({ type, m }) => Prisma.sql`(SELECT CAST(${type} AS text) AS type, r.id, r.created_at, ${m.rank} AS rank
        FROM ${Prisma.raw(m.table)} r WHERE r.account_id = ${account} AND ${where(m)} AND ${gate}
        ORDER BY r.created_at DESC, r.id DESC LIMIT ${first})`),
      ' UNION ALL ',
    );
  const fewerThanFirst = (read: string) => Prisma.sql`(SELECT count(*) FROM ${Prisma.raw(read)}) < ${first}`;
  const named = Prisma.join(
    matchings.map(({ type, m }) => Prisma.sql`SELECT h.type, h.id, h.rank, h.created_at, ${m.title} AS title, ${m.subtitle} AS subtitle
      FROM best h JOIN ${Prisma.raw(m.table)} r ON r.account_id = ${account} AND r.id = h.id WHERE h.type = ${type}`),
    ' UNION ALL ',
  );
  // UNION, not UNION ALL, where a row can be read by more than one read.
  return Prisma.sql`WITH exact AS (${reads((m) => Prisma.sql`${m.is} AND ${m.rank} = 0`, Prisma.sql`true`)}),
    prefix AS (${reads((m) => Prisma.sql`${m.startsWith} AND ${m.rank} < 2`, fewerThanFirst('exact'))}),
    exact_or_prefix AS (SELECT * FROM exact UNION SELECT * FROM prefix),
    substring AS (${reads((m) => m.contains, fewerThanFirst('exact_or_prefix'))}),
    best AS (SELECT * FROM (SELECT * FROM exact_or_prefix UNION SELECT * FROM substring) hits ORDER BY rank, created_at DESC, id DESC LIMIT ${first})
    SELECT type, id::text, title, subtitle FROM (${named}) hits ORDER BY rank, created_at DESC, id DESC`;
}
