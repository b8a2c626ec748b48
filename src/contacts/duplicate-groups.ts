// The contacts' duplicate groups kept between reads (docs/duplicates.md "How it stays fast",
// decisions §22). The rules are those of src/contacts/duplicates.ts; what changes is when they run.
// A write only queues the contacts it changed (triggers of migration *_duplicate_groups, one INSERT
// a statement); each read first brings the kept groups up to date for the queued contacts, then
// answers the best groups from an index. The first read of an account builds everything.
//
// What a queued contact can change, and what the read recomputes for it:
// - its e-mail or phone key: the groups it was and is in (duplicate_members), found again with
//   every contact they reach (`regroup`);
// - its name or block: the name pairs near its old and new place among its block's names
//   (`repairNames`): a name is paired with the NEIGHBOURS after it, so a row arriving or leaving
//   changes only pairs whose two names are within NEIGHBOURS rows of it.
import { randomUUID } from 'node:crypto';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { allGroups, CONTACT_NAME_RULES, contactCandidates, groupsOf, inGroup, keyedNames, MAX_GROUP, namePairs, NEIGHBOURS, oldestFirst, REASON_SCORES, RULE_SETTINGS, scored, type Candidate, type ContactGroup, type Group } from './duplicates.js';

/**
 * rebuildAfter: queued contacts beyond which the read builds the account's groups again rather than
 * repairing them; searchBound: contacts a repair's search may reach before it gives up and finds the
 * groups it touches again from all their members (`regroup`). Tests lower them to take those paths.
 */
export type RepairBounds = { rebuildAfter: number; searchBound: number };
export const REPAIR_BOUNDS: RepairBounds = { rebuildAfter: 20_000, searchBound: 20_000 };

type Tx = Prisma.TransactionClient;
type Pair = { a: string; b: string; rule: string; similarity: number };

/** The advisory lock of one account's kept groups: one read repairs them at a time. */
const lockKey = (accountId: string) => Prisma.sql`hashtextextended(${accountId}::text, 72)`;

/** `work` in a transaction of its own under RULE_SETTINGS and the account's lock. */
async function locked<T>(db: PrismaClient, accountId: string, work: (tx: Tx) => Promise<T>): Promise<T> {
  // Prisma's own 5 s limit off: statements are bounded by statement_timeout (src/db/bounds.ts).
  return db.$transaction(
    async (tx) => {
      for (const setting of RULE_SETTINGS) await tx.$executeRawUnsafe(setting);
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${lockKey(accountId)})`;
      return work(tx);
    },
    { maxWait: 10_000, timeout: 3_600_000 },
  );
}

/**
 * The account's groups brought up to date: built when they are not kept yet, else repaired for the
 * queued contacts. Writers queue once the account is marked kept (the triggers look for its
 * duplicate_state row); a writer that looked before the mark was committed is still running when
 * it is, and the build waits for it to end, so every write is either seen by the build or queued.
 */
export async function refreshDuplicateGroups(db: PrismaClient, accountId: string, bounds: Partial<RepairBounds> = {}): Promise<boolean> {
  const { rebuildAfter, searchBound } = { ...REPAIR_BOUNDS, ...bounds };
  const [state] = await db.$queryRaw<{ built: boolean }[]>`SELECT built FROM duplicate_state WHERE account_id = ${accountId}::uuid`;
  if (!state?.built) {
    await db.$executeRaw`INSERT INTO duplicate_state (account_id) VALUES (${accountId}::uuid) ON CONFLICT DO NOTHING`;
    if (!(await olderTransactionsEnded(db))) return false;
  }
  await locked(db, accountId, async (tx) => {
    const [now] = await tx.$queryRaw<{ built: boolean }[]>`SELECT built FROM duplicate_state WHERE account_id = ${accountId}::uuid`;
    const queued = await tx.$queryRaw<Queued[]>`
      DELETE FROM duplicate_queue WHERE account_id = ${accountId}::uuid
      RETURNING contact_id::text AS id, moved, old_company, old_domain, old_name`;
    if (!now?.built || queued.length > rebuildAfter) await build(tx, accountId);
    else if (queued.length > 0) await repair(tx, accountId, queued, searchBound);
  });
  return true;
}

/** How long a first read waits for the transactions running when it marked the account (then it answers from the rules, unkept). */
export const BUILD_WAIT_MS = 10_000;

/**
 * Whether every transaction now writing in this database (one with an id: a writer of contacts
 * has one before its trigger looks) has committed or rolled back within BUILD_WAIT_MS.
 */
async function olderTransactionsEnded(db: Tx): Promise<boolean> {
  const [{ running }] = (await db.$queryRaw<{ running: string[] }[]>`
    SELECT coalesce(array_agg(backend_xid::text), '{}') AS running FROM pg_stat_activity
     WHERE datname = current_database() AND backend_xid IS NOT NULL AND pid <> pg_backend_pid()`) as [{ running: string[] }];
  const until = Date.now() + BUILD_WAIT_MS;
  for (let wait = 5; running.length > 0 && Date.now() < until; wait = Math.min(wait * 2, 200)) {
    const [{ n }] = (await db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_xid::text = ANY(${running}::text[])`) as [{ n: number }];
    if (n === 0) return true;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  return running.length === 0;
}

/**
 * For eraseContact, in its transaction: the name its delete queued (the place it had among its
 * block's names) is forgotten; the next read repairs its whole old block instead (docs/decisions.md
 * §24: erasure reaches every copy).
 */
export async function forgetQueuedName(tx: Tx, accountId: string, contactId: string): Promise<void> {
  await tx.$executeRaw`UPDATE duplicate_queue SET old_name = NULL WHERE account_id = ${accountId}::uuid AND contact_id = ${contactId}::uuid`;
}

type Queued = { id: string; moved: boolean; old_company: string | null; old_domain: string | null; old_name: string | null };

/** Every pair and group of the account from its contacts, as the rules find them. */
async function build(tx: Tx, accountId: string): Promise<void> {
  for (const table of ['duplicate_pairs', 'duplicate_members', 'duplicate_groups']) {
    await tx.$executeRaw`DELETE FROM ${Prisma.raw(table)} WHERE account_id = ${accountId}::uuid`;
  }
  for (const { rule, block, name, kept } of CONTACT_NAME_RULES) {
    await tx.$executeRaw`
      INSERT INTO duplicate_pairs (account_id, a, b, rule, similarity)
      WITH ${keyedNames('contacts', accountId, { block, name })}, ${namePairs(Prisma.sql`AND ${kept(Prisma.sql`n.blk`)}`)}
      SELECT ${accountId}::uuid, a::uuid, b::uuid, ${rule}, sim FROM found`;
  }
  const keys = (key: Prisma.Sql) => tx.$queryRaw<{ ids: string[] }[]>`
    SELECT array_agg(t.id::text) AS ids FROM contacts t WHERE t.account_id = ${accountId}::uuid AND ${key} IS NOT NULL
     GROUP BY ${key} HAVING count(*) > 1`;
  const pairs = await tx.$queryRaw<Pair[]>`SELECT a::text, b::text, rule, similarity FROM duplicate_pairs WHERE account_id = ${accountId}::uuid`;
  const [email, phone] = [byKey('email', await keys(EMAIL)), byKey('phone', await keys(PHONE))];
  const groups = allGroups([...email, ...phone, ...pairs.map(asCandidate)], oldestFirst);
  await writeGroups(tx, accountId, groups.map((g) => keptAs(g, g.ids[0]!)));
  const [emailLinked, phoneLinked] = [new Set(email.flatMap((c) => c.ids)), new Set(phone.flatMap((c) => c.ids))];
  const nameBest = new Map<string, number>();
  for (const p of pairs) nameBest.set(p.a, Math.max(nameBest.get(p.a) ?? 0, Number(p.similarity)));
  await writeMembers(
    tx,
    accountId,
    groups.flatMap((g) => g.ids.map((id) => ({ id, grp: g.ids[0]!, name: nameBest.get(id) ?? null, email: emailLinked.has(id), phone: phoneLinked.has(id) }))),
  );
  await tx.$executeRaw`UPDATE duplicate_state SET built = true WHERE account_id = ${accountId}::uuid`;
  // The repairs' plans read these tables' statistics: a build may have written most of their rows.
  await tx.$executeRawUnsafe('ANALYZE duplicate_pairs, duplicate_members, duplicate_groups');
}

const EMAIL = Prisma.sql`dedupe_email(t.email)`;
const PHONE = Prisma.sql`dedupe_phone(t.phone)`;
/** A key as duplicate_members keeps it: a 64-bit hash (two keys of one group sharing one: about 1 in 10^10 at 50,000 members). */
const KEY = (key: Prisma.Sql) => Prisma.sql`hashtextextended(${key}, 0)`;
const byKey = (reason: string, rows: { ids: string[] }[]): Candidate[] => rows.map(({ ids }) => ({ reason, ids }));
const asCandidate = (p: Pair): Candidate => ({ reason: 'name', ids: [p.a, p.b], similarity: Number(p.similarity) });

/** Rounds of a repair's search before it gives up (each one statement). */
const SEARCH_ROUNDS = 1_000;

/** A queued contact's member row as it was: its group and its keys' hashes. */
type Was = { id: string; grp: string; email_key: string | null; phone_key: string | null };

/**
 * The queued contacts' pairs and groups brought up to date, at a cost bounded by what changed.
 *
 * A group is a connected component of the links (a shared e-mail key, a shared phone key, a name
 * pair). Links changed only at the `sources`: the queued contacts, the ends of the name pairs that
 * came or went, and the contacts that shared a key with a queued contact (its member row still has
 * the hash of the key it had). A component of the links with no source in it is a kept group as it
 * was. So the components are found from the sources alone (`search`), each search growing from
 * its sources over the links as they are now, until every search left open lies in kept groups of
 * its own (no two open searches share one): a search that ran out of contacts is a component
 * whole; an open one is every member of the kept groups it reached, but those a finished search
 * holds or that were deleted, and the contacts it reached that were in none. Past SEARCH_BOUND
 * contacts it gives up and the groups are found again from all their members (`regroup`).
 */
async function repair(tx: Tx, accountId: string, queued: Queued[], searchBound: number): Promise<void> {
  const account = Prisma.sql`${accountId}::uuid`;
  const dirty = [...new Set(queued.map((q) => q.id))];
  const gone: Pair[] = [];
  const made: Pair[] = [];
  for (const rule of CONTACT_NAME_RULES) {
    const pairs = await repairNames(tx, accountId, rule, dirty, queued);
    gone.push(...pairs.gone);
    made.push(...pairs.made);
  }
  const was = await tx.$queryRaw<Was[]>`
    SELECT contact_id::text AS id, grp::text, email_key::text, phone_key::text FROM duplicate_members
     WHERE account_id = ${account} AND contact_id = ANY(${dirty}::uuid[])`;
  const ends = [...new Set([...dirty, ...[...gone, ...made].flatMap((p) => [p.a, p.b])])];
  const emailKeys = was.flatMap((w) => (w.email_key === null ? [] : [w.email_key]));
  const phoneKeys = was.flatMap((w) => (w.phone_key === null ? [] : [w.phone_key]));
  // The sources that are live contacts, with the group each was in (null: none). Of the contacts
  // left with a key a queued contact had, one is enough: the key links it to the others, which its
  // search reaches in its first round.
  const sharer = (column: Prisma.Sql, keys: string[]) => Prisma.sql`
    (SELECT DISTINCT ON (s.${column}) s.contact_id FROM duplicate_members s
     WHERE s.account_id = ${account} AND s.${column} = ANY(${keys}::bigint[]) AND s.contact_id <> ALL(${dirty}::uuid[])
     ORDER BY s.${column}, s.contact_id)`;
  const sources = await tx.$queryRaw<{ id: string; grp: string | null }[]>`
    WITH ids AS (
      SELECT unnest(${ends}::uuid[]) AS id UNION ${sharer(Prisma.raw('email_key'), emailKeys)} UNION ${sharer(Prisma.raw('phone_key'), phoneKeys)}
    )
    SELECT t.id::text, m.grp::text FROM ids JOIN contacts t ON t.account_id = ${account} AND t.id = ids.id
      LEFT JOIN duplicate_members m ON m.account_id = ${account} AND m.contact_id = t.id`;
  const live = new Set(sources.map((s) => s.id));
  const deleted = was.filter((w) => !live.has(w.id));
  const found = await search(tx, accountId, sources, searchBound);
  // Given up: the sources and the contacts their links reach are the seeds (a key now shared may have changed their links).
  if ('reached' in found) await regroup(tx, accountId, dirty, found.reached);
  else await settle(tx, accountId, found, deleted);
}

/** A search's contacts (`nodes`), those it has yet to follow the links of (`frontier`), and the kept groups its contacts were in. */
type Search = { nodes: string[]; frontier: string[]; groups: Set<string> };
type Found = { searches: Search[]; was: Map<string, string | null>; near: Set<string> };

/**
 * The components of the links around `sources` (see `repair`): one search from each source,
 * merged where they meet; each round follows the links of the open searches that share a kept
 * group with another open search (or were in none), all in one statement. Past SEARCH_BOUND contacts or SEARCH_ROUNDS
 * rounds it gives up: the contacts it reached.
 */
async function search(tx: Tx, accountId: string, sources: { id: string; grp: string | null }[], bound: number): Promise<Found | { reached: string[] }> {
  const account = Prisma.sql`${accountId}::uuid`;
  const was = new Map<string, string | null>(sources.map((s) => [s.id, s.grp]));
  const of = new Map<string, number>();
  const parent: number[] = [];
  const searches: Search[] = [];
  const root = (n: number): number => {
    while (parent[n] !== n) n = parent[n] = parent[parent[n]!]!;
    return n;
  };
  for (const s of sources) {
    of.set(s.id, searches.length);
    parent.push(searches.length);
    searches.push({ nodes: [s.id], frontier: [s.id], groups: new Set(s.grp ? [s.grp] : []) });
  }
  const union = (x: number, y: number) => {
    [x, y] = [root(x), root(y)];
    if (x === y) return;
    if (searches[x]!.nodes.length < searches[y]!.nodes.length) [x, y] = [y, x];
    const [into, from] = [searches[x]!, searches[y]!];
    into.nodes.push(...from.nodes);
    into.frontier.push(...from.frontier);
    for (const g of from.groups) into.groups.add(g);
    parent[y] = x;
  };
  const open = () => [...new Set(parent.map((_, i) => root(i)))].filter((r) => searches[r]!.frontier.length > 0);
  // The contacts whose links may have changed: the sources and those their links reach now.
  let near: Set<string> | undefined;
  for (let round = 0; ; round++) {
    // Every source's links are followed once (the links that came are among them); then only
    // the open searches that may still be one component with another.
    const seen = new Map<string, number>();
    for (const r of open()) for (const g of searches[r]!.groups) seen.set(g, (seen.get(g) ?? 0) + 1);
    const waiting = open().filter((r) => round === 0 || searches[r]!.groups.size === 0 || [...searches[r]!.groups].some((g) => seen.get(g)! > 1));
    if (waiting.length === 0) break;
    // After the first round, the smallest frontier only (two searches that may meet grow from
    // the smaller side: a search that is a small piece cut off ends soon).
    const smallest = Math.min(...waiting.map((r) => searches[r]!.frontier.length));
    const moving = round === 0 ? waiting : waiting.filter((r) => searches[r]!.groups.size === 0 || searches[r]!.frontier.length === smallest).slice(0, 1);
    if (round === 1) near = new Set(of.keys());
    // Never before the first round has reached every contact whose links may have changed.
    if (near && (of.size > bound || round >= SEARCH_ROUNDS)) return { reached: [...near] };
    const frontier = moving.flatMap((r) => searches[r]!.frontier.splice(0));
    const links = await tx.$queryRaw<{ from: string; to: string; grp: string | null }[]>`
      WITH f AS (SELECT DISTINCT id FROM unnest(${frontier}::uuid[]) AS f(id)), linked AS (
        SELECT f.id AS src, p.b AS dst FROM f JOIN duplicate_pairs p ON p.account_id = ${account} AND p.a = f.id
        UNION SELECT f.id, p.a FROM f JOIN duplicate_pairs p ON p.account_id = ${account} AND p.b = f.id
        UNION SELECT f.id, o.id FROM f JOIN contacts t ON t.account_id = ${account} AND t.id = f.id
          JOIN contacts o ON o.account_id = ${account} AND dedupe_email(o.email) = ${EMAIL} AND o.id <> t.id
        UNION SELECT f.id, o.id FROM f JOIN contacts t ON t.account_id = ${account} AND t.id = f.id
          JOIN contacts o ON o.account_id = ${account} AND dedupe_phone(o.phone) = ${PHONE} AND o.id <> t.id
      )
      SELECT l.src::text AS from, l.dst::text AS to, m.grp::text FROM linked l
        LEFT JOIN duplicate_members m ON m.account_id = ${account} AND m.contact_id = l.dst`;
    for (const { from, to, grp } of links) {
      const at = of.get(from)!;
      const there = of.get(to);
      if (there !== undefined) union(at, there);
      else {
        const s = searches[root(at)]!;
        of.set(to, root(at));
        was.set(to, grp);
        s.nodes.push(to);
        s.frontier.push(to);
        if (grp) s.groups.add(grp);
      }
    }
  }
  return { searches: [...new Set(parent.map((_, i) => root(i)))].map((r) => searches[r]!), was, near: near ?? new Set(of.keys()) };
}

/**
 * The components a search found written: a finished search's contacts are a group of a new label
 * (or none, alone); an open search keeps the label of the largest kept group it reached, the other
 * groups it reached are relabelled into it, and its contacts are written. Every contact the search
 * reached is written again (its keys, best name similarity and links: only theirs can have
 * changed), then each group's row is read from its members' index: 10 oldest, links, best name.
 */
async function settle(tx: Tx, accountId: string, { searches, was, near }: Found, deleted: Was[]): Promise<void> {
  const account = Prisma.sql`${accountId}::uuid`;
  const touched = [...new Set([...[...was.values()].filter((g): g is string => g !== null), ...deleted.map((d) => d.grp)])];
  const sizes = new Map(
    (await tx.$queryRaw<{ grp: string; size: number }[]>`
      SELECT grp::text, size FROM duplicate_groups WHERE account_id = ${account} AND grp = ANY(${touched}::uuid[])`).map((r) => [r.grp, r.size]),
  );
  const finished = searches.filter((s) => s.frontier.length === 0);
  const leaving = [...finished.flatMap((s) => s.nodes.map((id) => was.get(id))), ...deleted.map((d) => d.grp)];
  const members: [string, string][] = [];
  const relabelled: [string, string][] = [];
  const groups: { grp: string; size: number }[] = [];
  for (const s of searches) {
    if (s.frontier.length === 0) {
      if (s.nodes.length < 2) continue;
      const label = randomUUID();
      members.push(...s.nodes.map((id): [string, string] => [id, label]));
      groups.push({ grp: label, size: s.nodes.length });
      continue;
    }
    const reached = [...s.groups].sort((x, y) => (sizes.get(y) ?? 0) - (sizes.get(x) ?? 0) || oldestFirst(x, y));
    const label = reached[0]!;
    relabelled.push(...reached.slice(1).map((g): [string, string] => [g, label]));
    // Written again: a contact that changes group or was in none, and those whose links may have changed.
    members.push(...s.nodes.filter((id) => !was.get(id) || near.has(id)).map((id): [string, string] => [id, label]));
    const size = reached.reduce((n, g) => n + (sizes.get(g) ?? 0), 0) - leaving.filter((g) => g && s.groups.has(g)).length + s.nodes.filter((id) => !was.get(id)).length;
    groups.push({ grp: label, size });
  }
  const alone = [...deleted.map((d) => d.id), ...finished.filter((s) => s.nodes.length < 2).flatMap((s) => s.nodes)];
  await tx.$executeRaw`DELETE FROM duplicate_members WHERE account_id = ${account} AND contact_id = ANY(${alone}::uuid[])`;
  await tx.$executeRaw`
    UPDATE duplicate_members m SET grp = r.label FROM unnest(${relabelled.map(([g]) => g)}::uuid[], ${relabelled.map(([, l]) => l)}::uuid[]) AS r(was, label)
     WHERE m.account_id = ${account} AND m.grp = r.was`;
  await refreshMembers(tx, accountId, members);
  await tx.$executeRaw`DELETE FROM duplicate_groups WHERE account_id = ${account} AND grp = ANY(${touched}::uuid[])`;
  await writeGroups(tx, accountId, await groupRows(tx, accountId, groups));
}

/** Each group's row from its members' index: its 10 oldest, whether a member shares an e-mail or a phone key, the best name similarity. */
async function groupRows(tx: Tx, accountId: string, groups: { grp: string; size: number }[]): Promise<KeptGroup[]> {
  const account = Prisma.sql`${accountId}::uuid`;
  const rows = await tx.$queryRaw<{ grp: string; ids: string[]; email: boolean; phone: boolean; name: number | null }[]>`
    SELECT g.grp::text,
           ARRAY(SELECT m.contact_id::text FROM duplicate_members m WHERE m.account_id = ${account} AND m.grp = g.grp ORDER BY m.contact_id LIMIT ${MAX_GROUP}) AS ids,
           EXISTS (SELECT 1 FROM duplicate_members m WHERE m.account_id = ${account} AND m.grp = g.grp AND m.email_linked) AS email,
           EXISTS (SELECT 1 FROM duplicate_members m WHERE m.account_id = ${account} AND m.grp = g.grp AND m.phone_linked) AS phone,
           (SELECT max(m.name_best) FROM duplicate_members m WHERE m.account_id = ${account} AND m.grp = g.grp) AS name
      FROM unnest(${groups.map((g) => g.grp)}::uuid[]) AS g(grp)`;
  const size = new Map(groups.map((g) => [g.grp, g.size]));
  return rows.map((r) => {
    // Each reason's best weighted score as allGroups computes it (REASON_SCORES × similarity).
    const best = new Map<string, number>();
    if (r.email) best.set('email', REASON_SCORES.email! * 1);
    if (r.phone) best.set('phone', REASON_SCORES.phone! * 1);
    if (r.name !== null) best.set('name', REASON_SCORES.name! * Number(r.name));
    return { grp: r.grp, ids: r.ids, ...scored(best), size: size.get(r.grp)!, best: Object.fromEntries(best) };
  });
}

/**
 * One name rule's pairs near each queued contact's old and new place found again; the pairs that
 * came and went. Around each place the block's names from the NEIGHBOURS before it to
 * the NEIGHBOURS after it (whole runs of one name: a name interval) are one stretch; overlapping
 * stretches are one. A pair within a stretch is made there exactly as over the whole block (a
 * stretch is contiguous in the block's order, and a pair is at most NEIGHBOURS rows apart), so
 * each stretch's kept pairs are replaced by its pairs made again, and every pair of a queued
 * contact is dropped first (its old place may no longer be in a stretch).
 */
async function repairNames(
  tx: Tx,
  accountId: string,
  { rule, block, name, kept }: (typeof CONTACT_NAME_RULES)[number],
  dirty: string[],
  queued: Queued[],
): Promise<{ gone: Pair[]; made: Pair[] }> {
  // A queued contact's old place: its old block and name; a name forgotten (an erasure): the whole block.
  const old = queued.filter((q) => q.moved);
  const oldBlocks = old.map((q) => (rule === 'company' ? q.old_company : q.old_domain));
  const stretches = Prisma.sql`
    places AS (
      SELECT DISTINCT blk, nm FROM (
        SELECT ${block} AS blk, ${name} AS nm FROM contacts t WHERE t.account_id = ${accountId}::uuid AND t.id = ANY(${dirty}::uuid[])
        UNION ALL SELECT * FROM unnest(${oldBlocks}::text[], ${old.map((q) => q.old_name)}::text[])
      ) p WHERE ${kept(Prisma.sql`blk`)}
    ), spans AS (
      SELECT p.blk,
             CASE WHEN p.nm IS NULL THEN (SELECT min(${name}) FROM contacts t WHERE t.account_id = ${accountId}::uuid AND ${block} = p.blk)
             ELSE coalesce((SELECT min(x.nm) FROM (SELECT ${name} AS nm FROM contacts t WHERE t.account_id = ${accountId}::uuid AND ${block} = p.blk AND ${name} < p.nm ORDER BY 1 DESC LIMIT ${NEIGHBOURS}) x), p.nm) END AS lo,
             CASE WHEN p.nm IS NULL THEN (SELECT max(${name}) FROM contacts t WHERE t.account_id = ${accountId}::uuid AND ${block} = p.blk)
             ELSE coalesce((SELECT max(x.nm) FROM (SELECT ${name} AS nm FROM contacts t WHERE t.account_id = ${accountId}::uuid AND ${block} = p.blk AND ${name} > p.nm ORDER BY 1 LIMIT ${NEIGHBOURS}) x), p.nm) END AS hi
        FROM places p
    ), ordered AS (
      SELECT blk, lo, hi, max(hi) OVER (PARTITION BY blk ORDER BY lo, hi ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before FROM spans
    ), numbered AS (
      SELECT blk, lo, hi, count(*) FILTER (WHERE before IS NULL OR lo > before) OVER (PARTITION BY blk ORDER BY lo, hi) AS island FROM ordered
    ), stretches AS (
      SELECT blk, island, min(lo) AS lo, max(hi) AS hi FROM numbered GROUP BY blk, island
    ), members AS (
      SELECT t.id, s.blk || '/' || s.island AS stretch FROM stretches s
        JOIN contacts t ON t.account_id = ${accountId}::uuid AND ${block} = s.blk AND ${name} BETWEEN s.lo AND s.hi
    )`;
  const gone = await tx.$queryRaw<Pair[]>`
    DELETE FROM duplicate_pairs WHERE account_id = ${accountId}::uuid AND rule = ${rule} AND (a = ANY(${dirty}::uuid[]) OR b = ANY(${dirty}::uuid[]))
    RETURNING a::text, b::text, rule, similarity`;
  gone.push(
    ...(await tx.$queryRaw<Pair[]>`
      WITH ${stretches}
      DELETE FROM duplicate_pairs p USING members m1, members m2
       WHERE p.account_id = ${accountId}::uuid AND p.rule = ${rule} AND p.a = m1.id AND p.b = m2.id AND m1.stretch = m2.stretch
      RETURNING p.a::text, p.b::text, p.rule, p.similarity`),
  );
  const made = await tx.$queryRaw<Pair[]>`
    INSERT INTO duplicate_pairs (account_id, a, b, rule, similarity)
    WITH ${stretches}, keyed AS (
      SELECT t.id::text AS id, m.stretch AS blk, ${name} AS nm, dedupe_trigrams(${name}) AS tg, dedupe_sketch(${name}) AS sk
        FROM members m JOIN contacts t ON t.account_id = ${accountId}::uuid AND t.id = m.id
    ), ${namePairs()}
    SELECT ${accountId}::uuid, a::uuid, b::uuid, ${rule}, sim FROM found
    ON CONFLICT DO NOTHING
    RETURNING a::text, b::text, rule, similarity`;
  const key = (p: Pair) => `${p.a} ${p.b} ${Number(p.similarity)}`;
  const before = new Set(gone.map(key));
  const after = new Set(made.map(key));
  return { gone: gone.filter((p) => !after.has(key(p))), made: made.filter((p) => !before.has(key(p))) };
}

/**
 * The groups of `seeds` found again from all their members, when the bounded search gave up (see
 * `repair`). Links changed only at the seeds, so the contacts that share an e-mail or phone key
 * with a seed, and every contact of a kept group of either, are all a seed can reach: grouped from
 * their links alone (one statement), they are as complete as the groups of the whole account. Only
 * what moved is written: a group that neither split nor merged keeps its members' rows; the seeds
 * are written again whatever (their best name similarity and links may have changed).
 */
async function regroup(tx: Tx, accountId: string, dirty: string[], seeds: string[]): Promise<void> {
  const account = Prisma.sql`${accountId}::uuid`;
  const rows = await tx.$queryRaw<{ reason: string; ids: string[]; similarity: number | null; grp: (string | null)[] | null }[]>`
    WITH seeds AS (
      SELECT DISTINCT id FROM unnest(${seeds}::uuid[]) AS s(id)
    ), near AS (
      SELECT id FROM seeds
      UNION SELECT o.id FROM seeds s JOIN contacts t ON t.account_id = ${account} AND t.id = s.id
        JOIN contacts o ON o.account_id = ${account} AND dedupe_email(o.email) = ${EMAIL}
      UNION SELECT o.id FROM seeds s JOIN contacts t ON t.account_id = ${account} AND t.id = s.id
        JOIN contacts o ON o.account_id = ${account} AND dedupe_phone(o.phone) = ${PHONE}
    ), kept AS (
      SELECT DISTINCT m.grp FROM near n JOIN duplicate_members m ON m.account_id = ${account} AND m.contact_id = n.id
    ), region AS MATERIALIZED (
      SELECT n.id, m.grp, m.email_key, m.phone_key FROM near n LEFT JOIN duplicate_members m ON m.account_id = ${account} AND m.contact_id = n.id
      UNION SELECT m.contact_id, m.grp, m.email_key, m.phone_key FROM kept k JOIN duplicate_members m ON m.account_id = ${account} AND m.grp = k.grp
    ), live AS MATERIALIZED (
      -- A member not queued is live with the keys it had (every delete and key change is queued):
      -- its hashed keys are read from its row, only the others' computed.
      SELECT id, email_key AS email, phone_key AS phone FROM region WHERE grp IS NOT NULL AND id <> ALL(${dirty}::uuid[])
      UNION ALL
      SELECT t.id, ${KEY(EMAIL)}, ${KEY(PHONE)} FROM region r JOIN contacts t ON t.account_id = ${account} AND t.id = r.id
       WHERE r.grp IS NULL OR r.id = ANY(${dirty}::uuid[])
    )
    SELECT 'email' AS reason, array_agg(id::text) AS ids, NULL::float8 AS similarity, NULL::text[] AS grp FROM live WHERE email IS NOT NULL GROUP BY email HAVING count(*) > 1
    UNION ALL SELECT 'phone', array_agg(id::text), NULL, NULL FROM live WHERE phone IS NOT NULL GROUP BY phone HAVING count(*) > 1
    UNION ALL SELECT 'name', ARRAY[p.a::text, p.b::text], p.similarity, NULL FROM live l JOIN duplicate_pairs p ON p.account_id = ${account} AND p.a = l.id
    UNION ALL SELECT 'kept', array_agg(id::text), NULL, array_agg(grp::text) FROM region`;
  const region = rows.find((r) => r.reason === 'kept')!;
  const was = new Map(region.ids.map((id, i) => [id, region.grp![i] ?? null]));
  const candidates = rows.filter((r) => r.reason !== 'kept').map((r): Candidate => (r.similarity === null ? { reason: r.reason, ids: r.ids } : { reason: r.reason, ids: r.ids, similarity: Number(r.similarity) }));
  const groups = allGroups(candidates, oldestFirst);
  // Each new group keeps the label most of its contacts had, so a group that neither split nor
  // merged rewrites no member; a label goes to one group only (the largest first), a group with
  // none left takes a new one (a contact's id could be a label still kept elsewhere).
  const labels = new Map<string, string>();
  const used = new Set<string>();
  for (const g of [...groups].sort((x, y) => y.ids.length - x.ids.length)) {
    const votes = new Map<string, number>();
    for (const id of g.ids) {
      const label = was.get(id);
      if (label && !used.has(label)) votes.set(label, (votes.get(label) ?? 0) + 1);
    }
    const label = [...votes].sort((x, y) => y[1] - x[1] || oldestFirst(x[0], y[0]))[0]?.[0] ?? randomUUID();
    used.add(label);
    for (const id of g.ids) labels.set(id, label);
  }
  const left = [...was].filter(([id, label]) => label !== null && !labels.has(id)).map(([id]) => id);
  const again = new Set([...dirty, ...seeds]);
  const moved = [...labels].filter(([id, label]) => was.get(id) !== label || again.has(id));
  const oldGroups = [...new Set([...was.values()].filter((g): g is string => g !== null))];
  await tx.$executeRaw`DELETE FROM duplicate_groups WHERE account_id = ${account} AND grp = ANY(${oldGroups}::uuid[])`;
  await tx.$executeRaw`DELETE FROM duplicate_members WHERE account_id = ${account} AND contact_id = ANY(${left}::uuid[])`;
  await refreshMembers(tx, accountId, moved);
  await writeGroups(tx, accountId, groups.map((g) => keptAs(g, labels.get(g.ids[0]!)!)));
}

/** A kept group's row as written: its label, score, reasons, 10 oldest, size and best score per reason. */
type KeptGroup = { grp: string; ids: string[]; size: number; best: Record<string, number>; score: number; reasons: string[] };

/** A group of allGroups as kept under `label`. */
const keptAs = (g: Group, label: string): KeptGroup => ({ grp: label, ids: g.ids.slice(0, MAX_GROUP), score: g.score, reasons: g.reasons, size: g.ids.length, best: Object.fromEntries(g.best!) });

/** Groups written (a group kept under its label already: replaced), a few thousand a statement. */
async function writeGroups(tx: Tx, accountId: string, groups: KeptGroup[]): Promise<void> {
  for (let at = 0; at < groups.length; at += 5_000) {
    await tx.$executeRaw`
      INSERT INTO duplicate_groups (account_id, grp, oldest, score, reasons, ids, size, best)
      SELECT ${accountId}::uuid, grp, ids[1], score, reasons, ids, size, best
        FROM jsonb_to_recordset(${JSON.stringify(groups.slice(at, at + 5_000))}::jsonb) AS g(grp uuid, score float8, reasons text[], ids uuid[], size int, best jsonb)
      ON CONFLICT (account_id, grp) DO UPDATE
        SET oldest = excluded.oldest, score = excluded.score, reasons = excluded.reasons, ids = excluded.ids, size = excluded.size, best = excluded.best`;
  }
}

/** A member as the build writes it: its label, best name similarity (null: no pair as `a`), and whether it shares its e-mail or phone key. */
type BuiltMember = { id: string; grp: string; name: number | null; email: boolean; phone: boolean };

/** The build's members written with their hashed keys, a few tens of thousands a statement. */
async function writeMembers(tx: Tx, accountId: string, members: readonly BuiltMember[]): Promise<void> {
  for (let at = 0; at < members.length; at += 50_000) {
    await tx.$executeRaw`
      INSERT INTO duplicate_members (account_id, contact_id, grp, email_key, phone_key, name_best, email_linked, phone_linked)
      SELECT ${accountId}::uuid, m.id, m.grp, ${KEY(EMAIL)}, ${KEY(PHONE)}, m.name, m.email, m.phone
        FROM jsonb_to_recordset(${JSON.stringify(members.slice(at, at + 50_000))}::jsonb) AS m(id uuid, grp uuid, name float8, email boolean, phone boolean)
        JOIN contacts t ON t.account_id = ${accountId}::uuid AND t.id = m.id`;
  }
}

/**
 * Contacts' labels written ([contact, label]) with what their group's row is read from, computed
 * from their rows and pairs as they are now: hashed keys, best name similarity, shared keys.
 */
async function refreshMembers(tx: Tx, accountId: string, members: readonly (readonly [string, string])[]): Promise<void> {
  const account = Prisma.sql`${accountId}::uuid`;
  for (let at = 0; at < members.length; at += 50_000) {
    const chunk = members.slice(at, at + 50_000);
    await tx.$executeRaw`
      INSERT INTO duplicate_members (account_id, contact_id, grp, email_key, phone_key, name_best, email_linked, phone_linked)
      SELECT ${account}, m.contact_id, m.grp, ${KEY(EMAIL)}, ${KEY(PHONE)},
             (SELECT max(p.similarity) FROM duplicate_pairs p WHERE p.account_id = ${account} AND p.a = t.id),
             EXISTS (SELECT 1 FROM contacts o WHERE o.account_id = ${account} AND dedupe_email(o.email) = ${EMAIL} AND o.id <> t.id),
             EXISTS (SELECT 1 FROM contacts o WHERE o.account_id = ${account} AND dedupe_phone(o.phone) = ${PHONE} AND o.id <> t.id)
        FROM unnest(${chunk.map(([id]) => id)}::uuid[], ${chunk.map(([, label]) => label)}::uuid[]) AS m(contact_id, grp)
        JOIN contacts t ON t.account_id = ${account} AND t.id = m.contact_id
      ON CONFLICT (account_id, contact_id) DO UPDATE
        SET grp = excluded.grp, email_key = excluded.email_key, phone_key = excluded.phone_key,
            name_best = excluded.name_best, email_linked = excluded.email_linked, phone_linked = excluded.phone_linked`;
  }
}

/** The account's best `first` groups as kept (refreshDuplicateGroups first): best score first, then the group with the oldest contact. */
export async function keptGroups(db: Tx, accountId: string, first: number): Promise<Group[]> {
  const rows = await db.$queryRaw<{ ids: string[]; score: number; reasons: string[] }[]>`
    SELECT ids::text[] AS ids, score, reasons FROM duplicate_groups WHERE account_id = ${accountId}::uuid ORDER BY score DESC, oldest LIMIT ${first}`;
  return rows.map((r) => ({ ids: r.ids, score: Number(r.score), reasons: r.reasons }));
}
/** The account's best `first` groups of likely duplicate contacts, each with its contacts (oldest first). */
export async function duplicateContacts<C extends { id: string; createdAt: Date }>(db: Prisma.TransactionClient, accountId: string, first: number): Promise<ContactGroup<C>[]> {
  // Kept groups are repaired in a transaction of their own; inside a caller's transaction, or while
  // a first build waits on a long transaction, the rules run over the whole account instead.
  const client = db as unknown as PrismaClient;
  const kept = typeof client.$transaction === 'function' && (await refreshDuplicateGroups(client, accountId));
  const groups = kept ? await keptGroups(db, accountId, first) : groupsOf(await contactCandidates(db, accountId), oldestFirst, first);
  const rows = (await db.contact.findMany({ where: { accountId, id: { in: groups.flatMap((g) => g.ids) } } })) as unknown as C[];
  return groups.map((g) => ({ contacts: inGroup(rows, g.ids), score: g.score, reasons: g.reasons }));
}
