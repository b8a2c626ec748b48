// Finding duplicates (docs/decisions.md §22, docs/duplicates.md). Each rule reads a key of the
// records from an expression index (prisma/migrations/*_duplicate_keys): records sharing an exact
// key form a candidate group; names are compared by trigram similarity with their nearest
// neighbours in key order within the same company or e-mail domain, never every pair. Groups that
// share a record are one group; its score combines its reasons. Contacts here; companies
// (src/companies/duplicates.ts) use the same grouping.
import { z } from 'zod';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { FREE_MAIL_DOMAINS } from '../links/domain.js';

export const MAX_GROUP = 10;
export const MAX_GROUPS = 100;
/** Name trigram similarity at or above which two names in one company or e-mail domain are a candidate pair. */
export const NAME_SIMILARITY = 0.85;
/** How many following names (in key order, within a company or domain) each name is compared with. */
export const NEIGHBOURS = 4;

export const duplicatesArgs = z.object({ first: z.number().int().min(1, 'Must be at least 1').max(MAX_GROUPS, `Must be at most ${MAX_GROUPS}`).default(25) });
export const duplicatesByAccountArgs = duplicatesArgs.extend({ accountId: z.string().uuid('Must be a UUID') });

/** How much each reason alone says two records are one; a group's score is 1 − Π(1 − s) over its reasons. */
export const REASON_SCORES: Record<string, number> = { email: 0.9, phone: 0.75, domain: 0.9, name: 0.6 };

/** What the queries find: records sharing a key (`ids`, any order) or a pair of similar names (`similarity`). */
export type Candidate = { reason: string; ids: string[]; similarity?: number };

export type Group = { ids: string[]; score: number; reasons: string[]; best?: Map<string, number> };

/**
 * A group's reasons and score from each reason's best weighted score (REASON_SCORES × similarity):
 * 1 − Π(1 − best) in REASON_SCORES' order, rounded to 3 places.
 */
export function scored(best: ReadonlyMap<string, number>): { score: number; reasons: string[] } {
  const reasons = Object.keys(REASON_SCORES).filter((r) => best.has(r));
  const score = 1 - reasons.reduce((left, r) => left * (1 - best.get(r)!), 1);
  return { score: Math.round(score * 1000) / 1000, reasons };
}

/**
 * The candidates as groups: records linked by any candidate are one group (union-find), its
 * reasons the union of theirs (in REASON_SCORES' order), its score the combination of each reason's
 * best (rounded to 3 places), its records all of them in the `order` (oldest first).
 */
export function allGroups(candidates: readonly Candidate[], order: (a: string, b: string) => number): Group[] {
  const parent = new Map<string, string>();
  const find = (id: string): string => {
    let root = id;
    while (parent.get(root) !== root) root = parent.get(root)!;
    for (let at = id; at !== root; ) {
      const next = parent.get(at)!;
      parent.set(at, root);
      at = next;
    }
    return root;
  };
  const add = (id: string) => (parent.has(id) ? undefined : parent.set(id, id));
  for (const c of candidates) {
    c.ids.forEach(add);
    for (const id of c.ids.slice(1)) parent.set(find(id), find(c.ids[0]!));
  }
  const best = new Map<string, Map<string, number>>();
  for (const c of candidates) {
    const root = find(c.ids[0]!);
    const reasons = best.get(root) ?? new Map<string, number>();
    const score = (REASON_SCORES[c.reason] ?? 0.5) * (c.similarity ?? 1);
    reasons.set(c.reason, Math.max(reasons.get(c.reason) ?? 0, score));
    best.set(root, reasons);
  }
  const members = new Map<string, string[]>();
  for (const id of parent.keys()) {
    const root = find(id);
    const ids = members.get(root);
    if (ids) ids.push(id);
    else members.set(root, [id]);
  }
  return [...members.entries()].map(([root, ids]) => ({ ids: ids.sort(order), ...scored(best.get(root)!), best: best.get(root)! }));
}

/**
 * The best `first` of the candidates' groups (allGroups), each with the `order`'s first MAX_GROUP
 * records (oldest first): best score first, then the group with the oldest record.
 */
export function groupsOf(candidates: readonly Candidate[], order: (a: string, b: string) => number, first: number): Group[] {
  return allGroups(candidates, order)
    .map(({ ids, score, reasons }) => ({ ids: ids.slice(0, MAX_GROUP), score, reasons }))
    .sort((a, b) => b.score - a.score || order(a.ids[0]!, b.ids[0]!))
    .slice(0, first);
}

/**
 * The rules' settings: no JIT and no parallel workers. At 1,000,000 contacts the name rules' plans
 * cost enough for PostgreSQL to compile them (4 s of JIT inlining and optimisation a rule) and to
 * split the scan over workers whose Gather Merge then waited for a core (9 s); the four rules
 * already run side by side (BENCHMARKS.md "Duplicates").
 */
export const RULE_SETTINGS = ['SET LOCAL jit = off', 'SET LOCAL max_parallel_workers_per_gather = 0'] as const;

/** The rows of one rule's statement, under RULE_SETTINGS in a transaction of its own (inside a caller's transaction: as it is). */
async function ruleRows<T>(db: Prisma.TransactionClient, sql: Prisma.Sql): Promise<T[]> {
  const client = db as unknown as PrismaClient;
  if (typeof client.$transaction !== 'function') return db.$queryRaw<T[]>(sql);
  // Prisma's own 5 s limit off: the statement is bounded by statement_timeout, which the pool sets at BEGIN (src/db/bounds.ts).
  const results = await client.$transaction([...RULE_SETTINGS.map((s) => client.$executeRawUnsafe(s)), client.$queryRaw<T[]>(sql)], { maxWait: 10_000, timeout: 3_600_000 });
  return results.at(-1) as T[];
}

/**
 * Records sharing `key` (an expression of alias `t`, one a duplicate index holds with the columns
 * it is made of: an index-only scan, the key's value read from the index), as candidates.
 */
export async function sameKey(db: Prisma.TransactionClient, table: 'contacts' | 'companies', accountId: string, reason: string, key: Prisma.Sql): Promise<Candidate[]> {
  const rows = await ruleRows<{ ids: string[] }>(db, Prisma.sql`
    SELECT array_agg(t.id::text) AS ids FROM ${Prisma.raw(`"${table}"`)} t
     WHERE t.account_id = ${accountId}::uuid AND ${key} IS NOT NULL
     GROUP BY ${key} HAVING count(*) > 1`);
  return rows.map(({ ids }) => ({ reason, ids }));
}

/** The CTE `keyed` of the name rule: the account's (id, blk, nm, tg, sk) with a block, read from the block's index. */
export function keyedNames(table: 'contacts' | 'companies', accountId: string, { block, name }: { block: Prisma.Sql; name: Prisma.Sql }): Prisma.Sql {
  return Prisma.sql`keyed AS (
      SELECT t.id::text AS id, ${block} AS blk, ${name} AS nm, dedupe_trigrams(${name}) AS tg, dedupe_sketch(${name}) AS sk
        FROM ${Prisma.raw(`"${table}"`)} t
       WHERE t.account_id = ${accountId}::uuid AND ${block} IS NOT NULL
    )`;
}

/**
 * The CTEs `neighbours`, `bounded` and `found` of the name rule over a CTE `keyed` (id, blk, nm,
 * tg, sk; blk the window's partition): `found` holds each pair (blk, nm, a, b, sim, run) of names
 * similar enough, each name compared with the NEIGHBOURS after it in (blk, nm, id) order.
 */
export function namePairs(blocks: Prisma.Sql = Prisma.empty): Prisma.Sql {
  const steps = Array.from({ length: NEIGHBOURS }, (_, i) => i + 1);
  const leads = Prisma.raw(steps.map((k) => `lead(id, ${k}) OVER w AS id${k}, lead(nm, ${k}) OVER w AS nm${k}, lead(tg, ${k}) OVER w AS tg${k}, lead(sk, ${k}) OVER w AS sk${k}`).join(', '));
  // The threshold as a fraction of integers, so the bound is compared exactly: a pair may reach it
  // only when 100·I ≥ 85·(na + nb − I), I the most trigrams the two can share.
  const [num, den] = [Math.round(NAME_SIMILARITY * 100), 100];
  const shared = (k: number) => `least(tg - bit_count((sk & ~sk${k})::bit(64)), tg${k} - bit_count((sk${k} & ~sk)::bit(64)))`;
  // One name twice further than the next name: the names between are that name too (the window's
  // order), so each is paired with the next already, at similarity 1, and the pair adds nothing to
  // the groups or their scores (groupsOf): it is not made. Where many people share a name (1.29
  // million such pairs at a million contacts) this is 3 pairs in 4 fewer to make, send and join.
  const again = (k: number) => (k === 1 ? '' : ` AND nm${k} <> nm`);
  const allowed = Prisma.raw(steps.map((k) => `id${k} IS NOT NULL${again(k)} AND ${den}::bigint * ${shared(k)} >= ${num}::bigint * (tg + tg${k} - ${shared(k)}) AS ok${k}`).join(', '));
  const pairs = Prisma.raw(steps.map((k) => `(ok${k}, id${k}, nm${k}, tg${k})`).join(', '));
  const anyAllowed = Prisma.raw(steps.map((k) => `ok${k}`).join(' OR '));
  // `blocks` (a test of n.blk) drops whole blocks, so it changes no other block's neighbours; it is
  // applied after the window (OFFSET 0 keeps the planner from pushing it into the scan), where it
  // cannot move the planner's estimate of the scan's rows: a test of many values there made it
  // guess 5 % of them, choose a sequential scan and compute every key again (5 s at 100,000).
  // tg and sk follow id in the window's order (which they cannot change: they are functions of nm) so
  // that the scan passes them from the index: the planner computes a window's other outputs above it,
  // from the row's columns. The bound of each neighbour is a column of its name's row (`allowed`),
  // and only a row with one allowed neighbour is unfolded into pairs: about one row in a hundred at
  // 100,000 contacts, where unfolding every row into its 4 pairs first was half the rule's time
  // (BENCHMARKS.md "Duplicates"). Then one name twice, which similarity() puts at exactly 1 (a name
  // with trigrams: the bound let it through): most pairs at a million contacts, where many people
  // share a name; else similarity().
  // A name repeated is sent as one candidate of all its ids (`run`), not as a pair per name: the
  // pairs of its names with the next are a chain through all of them at similarity 1, which is
  // what groupsOf makes of one candidate of them all (a tenth of the rows at 100,000 contacts).
  return Prisma.sql`neighbours AS (
      SELECT id, blk, nm, tg, sk, ${leads} FROM keyed WINDOW w AS (PARTITION BY blk ORDER BY nm, id, tg, sk) OFFSET 0
    ), bounded AS (
      SELECT n.*, ${allowed} FROM neighbours n WHERE n.nm <> '' ${blocks} OFFSET 0
    ), found AS (
      SELECT n.blk, n.nm, n.id AS a, p.other AS b, s.sim, n.nm = p.other_nm AS run
        FROM bounded n CROSS JOIN LATERAL (VALUES ${pairs}) AS p(ok, other, other_nm, other_tg)
        CROSS JOIN LATERAL (SELECT CASE
               WHEN n.nm = p.other_nm AND n.tg + p.other_tg > 0 THEN 1
               ELSE similarity(n.nm, p.other_nm)::float8 END AS sim) AS s
       WHERE (${anyAllowed}) AND p.ok AND s.sim >= ${NAME_SIMILARITY}
    )`;
}

/**
 * Pairs of similar names (trigram similarity ≥ NAME_SIMILARITY) within one `block` (an expression
 * of `t`), each name compared with the NEIGHBOURS after it in (block, name) order: the order an
 * index on (account_id, block, name) holds, so the account is read once, in order, from the index
 * alone. A pair is compared only when its trigram counts and sketches (dedupe_trigrams,
 * dedupe_sketch, in the same index) allow a similarity of NAME_SIMILARITY: bits set in one
 * sketch and not the other are at least that many trigrams only one name has, so the common
 * trigrams are at most I = least(na − bits only in a, nb − bits only in b), and similarity
 * (common / (na + nb − common)) at most I / (na + nb − I). Exact: a pair it rules out is below the
 * threshold; at 100,000 contacts it leaves about one pair in a hundred to compare (BENCHMARKS.md).
 */
export async function similarNames(
  db: Prisma.TransactionClient,
  table: 'contacts' | 'companies',
  accountId: string,
  { block, name, blocks = Prisma.empty }: { block: Prisma.Sql; name: Prisma.Sql; blocks?: Prisma.Sql },
): Promise<Candidate[]> {
  const rows = await ruleRows<{ ids: string[]; similarity: number }>(db, Prisma.sql`
    WITH ${keyedNames(table, accountId, { block, name })}, ${namePairs(blocks)}
    SELECT ARRAY[a, b] AS ids, sim AS similarity FROM found WHERE NOT run
    UNION ALL
    SELECT array_agg(a) || max(b), 1 FROM found WHERE run GROUP BY blk, nm`);
  return rows.map((r) => ({ reason: 'name', ids: r.ids, similarity: Number(r.similarity) }));
}

/** Free mail says nothing of where a person works (src/links/domain.ts): a test that `blk` (an e-mail domain) is not one. */
export const notFreeMail = (blk: Prisma.Sql) => Prisma.sql`${blk} <> ALL(${[...FREE_MAIL_DOMAINS]}::text[]) AND ${blk} !~ '^gmx\\.'`;

/** The contacts' name rule, once per block: similar names within one company, or one e-mail domain that is not free mail. */
export const CONTACT_NAME_RULES = [
  { rule: 'company', block: Prisma.sql`dedupe_company(t.company_id, t.company)`, name: Prisma.sql`dedupe_name(t.first_name, t.last_name)`, kept: (blk: Prisma.Sql) => Prisma.sql`${blk} IS NOT NULL` },
  { rule: 'domain', block: Prisma.sql`dedupe_email_domain(t.email)`, name: Prisma.sql`dedupe_name(t.first_name, t.last_name)`, kept: (blk: Prisma.Sql) => Prisma.sql`${blk} IS NOT NULL AND ${notFreeMail(blk)}` },
] as const;

/** Every candidate group of the account's contacts: same e-mail, same phone, similar names in one company or e-mail domain. */
export async function contactCandidates(db: Prisma.TransactionClient, accountId: string): Promise<Candidate[]> {
  const [byCompany, byDomain] = CONTACT_NAME_RULES;
  const [email, phone, company, domain] = await Promise.all([
    sameKey(db, 'contacts', accountId, 'email', Prisma.sql`dedupe_email(t.email)`),
    sameKey(db, 'contacts', accountId, 'phone', Prisma.sql`dedupe_phone(t.phone)`),
    similarNames(db, 'contacts', accountId, byCompany),
    similarNames(db, 'contacts', accountId, { ...byDomain, blocks: Prisma.sql`AND ${notFreeMail(Prisma.sql`n.blk`)}` }),
  ]);
  return [...email, ...phone, ...company, ...domain];
}

/** The oldest first: ids are UUIDv7 (time-ordered), so their order is their creation's. */
export const oldestFirst = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export type ContactGroup<C> = { contacts: C[]; score: number; reasons: string[] };

/** A group's records as read, oldest first (created_at, then id). */
export function inGroup<R extends { id: string; createdAt: Date }>(rows: readonly R[], ids: readonly string[]): R[] {
  const wanted = new Set(ids);
  return rows.filter((r) => wanted.has(r.id)).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || oldestFirst(a.id, b.id));
}
