// npm run bench:duplicates -- [--contacts 100000] [--rounds 7] [--inserts 7] [--writes 7] [--check]
// Account.duplicateContacts at --contacts contacts (docs/decisions.md §22: within a second at
// 100,000), timed as the service runs it (src/contacts/duplicates.ts), without HTTP. The bench
// account (seedBench's contacts, then 2% of them again as duplicates: the same e-mail with another
// case and a +tag, the same phone written otherwise, or a one-letter slip in the name at the same
// company) lives in a database of its own (BENCH_DATABASE_URL's server, `crm_bench_duplicates_<n>`),
// made when missing. Prints the candidates and groups found and the p50 / max of the rounds; with
// --explain, first each rule's query under EXPLAIN (ANALYZE, BUFFERS). The tables are vacuumed
// first, as autovacuum keeps them: the rules read index-only scans, which skip the rows on pages the
// visibility map marks all-visible.
import { performance } from 'node:perf_hooks';
import { Prisma } from '../../src/generated/prisma/client.js';
import { seedBench } from '../../src/cli/seed-bench.js';
import { openDatabase } from '../../src/db/client.js';
import { allGroups, contactCandidates, MAX_GROUP, oldestFirst, RULE_SETTINGS } from '../../src/contacts/duplicates.js';
import { duplicateContacts, keptGroups } from '../../src/contacts/duplicate-groups.js';
import { CONTACTS, mergeRecords } from '../../src/contacts/merge.js';
import { SYSTEM } from '../../src/events/types.js';
import { ensureMigrated, intFlag, namedBenchDatabaseUrl, parseFlags, withAdmin } from './common.js';

const args = process.argv.slice(2).filter((a) => a !== '--');
const explain = args.includes('--explain');
/** --check: every kept group (ids, score, reasons) compared with the rules run over the whole account. */
const check = args.includes('--check');
const flags = parseFlags(args.filter((a) => a !== '--explain' && a !== '--check'), ['contacts', 'rounds', 'merges', 'writes', 'inserts']);
const contacts = intFlag(flags, 'contacts', 100_000, 1, 10_000_000);
const rounds = intFlag(flags, 'rounds', 7, 1, 100);
/** Merges timed (docs/decisions.md §22: 10 duplicates with 1,000 deals between them, one transaction, ≤ 500 ms); 0: none. */
const merges = intFlag(flags, 'merges', 0, 0, 100);
/** Reads timed after a few writes each (writeSome): what a read repairs; --inserts: after inserts only. */
const writeRounds = intFlag(flags, 'writes', 0, 0, 100);
const insertRounds = intFlag(flags, 'inserts', 0, 0, 100);
const url = namedBenchDatabaseUrl(`crm_bench_duplicates_${contacts}`);
const log = (line: string) => process.stderr.write(`${line}\n`);

await ensureMigrated(url);
// Seeding a million rows, planting their duplicates, vacuuming, and the rules at a million before
// this change outlast the service's 10 s statement bound: this database's own, the role's default
// in it (which the migrations set) and the client's.
await withAdmin(url, (client) => client.query(`ALTER ROLE CURRENT_USER IN DATABASE "${new URL(url).pathname.slice(1)}" SET statement_timeout = 900000`));
const db = await openDatabase({ databaseUrl: url, dataDir: '', poolMax: 8, bounds: { statementTimeoutMs: 900_000, poolTimeoutMs: 60_000 } });
try {
  const name = `Duplicates bench (${contacts} contacts)`;
  let account = await db.prisma.account.findFirst({ where: { name }, select: { id: true } });
  if (!account) {
    log(`seeding ${contacts} contacts`);
    const seeded = await seedBench(db.prisma, { contacts, deals: 0, invoices: 0, submissions: 0, seed: 22 });
    await db.prisma.account.update({ where: { id: seeded.accountId }, data: { name } });
    // 2% again, a third each by e-mail, phone and name.
    await db.prisma.$executeRaw`
      INSERT INTO contacts (id, account_id, first_name, last_name, email, phone, company, company_id, created_at, updated_at)
      SELECT gen_random_uuid(), account_id,
             CASE WHEN n % 3 = 2 THEN first_name || 'x' ELSE first_name END, last_name,
             CASE WHEN n % 3 = 0 THEN upper(split_part(email, '@', 1)) || '+dup@' || split_part(email, '@', 2) END,
             CASE WHEN n % 3 = 1 THEN '+1 ' || phone END,
             company, company_id, now(), now()
        FROM (SELECT c.*, row_number() OVER (ORDER BY id) AS n FROM contacts c WHERE account_id = ${seeded.accountId}::uuid) s
       WHERE n % 50 = 0`;
    await db.prisma.$executeRawUnsafe('ANALYZE contacts');
    account = { id: seeded.accountId };
  }
  await db.prisma.$executeRawUnsafe('VACUUM (ANALYZE) contacts, companies');
  const total = await db.prisma.contact.count({ where: { accountId: account.id } });
  if (explain) {
    // Each rule's statement as the service sends it, under EXPLAIN, one at a time.
    const explaining = {
      $queryRaw: async (sql: Prisma.Sql) => {
        const explained = Prisma.sql([`EXPLAIN (ANALYZE, BUFFERS) `, ''], sql);
        const results = await db.prisma.$transaction([...RULE_SETTINGS.map((s) => db.prisma.$executeRawUnsafe(s)), db.prisma.$queryRaw<{ 'QUERY PLAN': string }[]>(explained)], { timeout: 3_600_000 });
        log((results.at(-1) as { 'QUERY PLAN': string }[]).map((r) => r['QUERY PLAN']).join('\n') + '\n');
        return [];
      },
    } as unknown as Prisma.TransactionClient;
    for (const rule of [0, 1, 2, 3]) await contactCandidates(onlyRule(explaining, rule), account.id);
  }
  const candidates = await contactCandidates(db.prisma, account.id);
  // The first read builds the kept groups when the account has none (src/contacts/duplicate-groups.ts).
  const built = performance.now();
  let groups = (await duplicateContacts(db.prisma, account.id, 25)).length;
  const firstMs = performance.now() - built;
  // The kept groups' tables as autovacuum keeps them: a build has just written most of their rows
  // (and the migration that made them deleted as many), which the repairs' index scans would
  // otherwise visit in the heap (2 s of each read's name repair at 1,000,000 contacts).
  await db.prisma.$executeRawUnsafe('VACUUM (ANALYZE) duplicate_pairs, duplicate_members, duplicate_groups');
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    groups = (await duplicateContacts(db.prisma, account.id, 25)).length;
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const p50 = times[Math.floor(times.length / 2)]!;
  // Reads after inserts only: before each, 3 contacts copied from others as duplicates (e-mail,
  // phone, name): the read's search joins them to the groups they link (src/contacts/duplicate-groups.ts, `repair`).
  const afterInserts: number[] = [];
  for (let i = 0; i < insertRounds; i++) {
    await writeSome(account.id, 1000 + i, false);
    const started = performance.now();
    await duplicateContacts(db.prisma, account.id, 25);
    afterInserts.push(performance.now() - started);
  }
  afterInserts.sort((a, b) => a - b);
  // Reads after mixed writes: before each, 3 contacts copied as above, 2 renamed and 1 deleted, so
  // the read's search finds whether the groups they touch split (`repair`).
  const afterWrites: number[] = [];
  for (let i = 0; i < writeRounds; i++) {
    await writeSome(account.id, i);
    const started = performance.now();
    await duplicateContacts(db.prisma, account.id, 25);
    afterWrites.push(performance.now() - started);
  }
  afterWrites.sort((a, b) => a - b);
  const same = check ? await sameAsTheRules(account.id) : undefined;
  const by = (reason: string) => candidates.filter((c) => c.reason === reason).length;
  const merged = merges ? await timeMerges(account.id, merges) : undefined;
  console.log(JSON.stringify({
    contacts: total,
    candidates: { email: by('email'), phone: by('phone'), name: by('name') },
    groups,
    rounds,
    first_ms: Math.round(firstMs),
    p50_ms: Math.round(p50),
    max_ms: Math.round(times.at(-1)!),
    ...(insertRounds > 0 && { after_inserts: { rounds: insertRounds, p50_ms: Math.round(afterInserts[Math.floor(insertRounds / 2)]!), max_ms: Math.round(afterInserts.at(-1)!) } }),
    ...(writeRounds > 0 && { after_writes: { rounds: writeRounds, p50_ms: Math.round(afterWrites[Math.floor(writeRounds / 2)]!), max_ms: Math.round(afterWrites.at(-1)!) } }),
    ...(same && { same_as_the_rules: same }),
    ...(merged && { merges: merged }),
  }));
} finally {
  await db.close();
}

/**
 * `n` merges, each of a primary and 10 duplicates (one e-mail, another case) holding 1,000 open deals
 * between them (100 each), made for it in the bench account, merged as mergeContacts does: one
 * transaction, the events and counters included. The p50 / max of the merges, and the deals moved.
 */
async function timeMerges(accountId: string, n: number): Promise<{ n: number; p50_ms: number; max_ms: number; deals_moved: number }> {
  const times: number[] = [];
  let moved = 0;
  for (let i = 0; i < n; i++) {
    const email = `merge-${Date.now()}-${i}@merge.example`;
    const ids = await db.prisma.$queryRaw<{ id: string }[]>`
      INSERT INTO contacts (id, account_id, first_name, last_name, email, created_at, updated_at)
      SELECT gen_random_uuid(), ${accountId}::uuid, 'Merge', 'Bench ' || k, CASE WHEN k = 0 THEN ${email} ELSE upper(${email}) END, now(), now()
        FROM generate_series(0, 10) AS k
      RETURNING id::text AS id`;
    const [primary, ...duplicates] = ids.map((r) => r.id).sort();
    await db.prisma.$executeRaw`
      INSERT INTO deals (id, account_id, contact_id, title, value, created_at, updated_at)
      SELECT gen_random_uuid(), ${accountId}::uuid, (${duplicates}::uuid[])[1 + k % 10], 'Merge bench deal ' || k, 100, now(), now()
        FROM generate_series(0, 999) AS k`;
    const started = performance.now();
    await db.prisma.$transaction((tx) => mergeRecords(tx, CONTACTS, { accountId, id: primary! }, duplicates, SYSTEM), { timeout: 30_000 });
    times.push(performance.now() - started);
    moved += await db.prisma.deal.count({ where: { accountId, contactId: primary! } });
  }
  times.sort((a, b) => a - b);
  return { n, p50_ms: Math.round(times[Math.floor(times.length / 2)]!), max_ms: Math.round(times.at(-1)!), deals_moved: moved };
}

/** Round `i`'s writes: 3 duplicates of other contacts inserted; unless `insertsOnly`, 2 contacts renamed and the newest deleted. */
async function writeSome(accountId: string, i: number, mixed = true): Promise<void> {
  const picked = await db.prisma.$queryRaw<{ id: string }[]>`
    SELECT id::text FROM contacts WHERE account_id = ${accountId}::uuid ORDER BY id OFFSET ${(i * 7919) % Math.max(1, contacts - 10)} LIMIT 5`;
  const ids = picked.map((r) => r.id);
  await db.prisma.$executeRaw`
    INSERT INTO contacts (id, account_id, first_name, last_name, email, phone, company, company_id, created_at, updated_at)
    SELECT gen_random_uuid(), account_id,
           CASE WHEN n = 3 THEN first_name || 'y' ELSE first_name END, last_name,
           CASE WHEN n = 1 THEN upper(email) END, CASE WHEN n = 2 THEN '+44 ' || phone END, company, company_id, now(), now()
      FROM (SELECT c.*, row_number() OVER (ORDER BY id) AS n FROM contacts c WHERE id = ANY(${ids.slice(0, 3)}::uuid[])) s`;
  if (!mixed) return;
  await db.prisma.$executeRaw`UPDATE contacts SET first_name = first_name || 'z', updated_at = now() WHERE id = ANY(${ids.slice(3, 5)}::uuid[])`;
  // The newest contact (one just copied: the seed's contacts have notes that keep them).
  await db.prisma.$executeRaw`DELETE FROM contacts WHERE id = (SELECT id FROM contacts WHERE account_id = ${accountId}::uuid ORDER BY created_at DESC LIMIT 1)`;
}

/** Whether every kept group equals the rules' over the whole account: the count of groups, and the first difference. */
async function sameAsTheRules(accountId: string): Promise<{ groups: number; equal: boolean; first_difference?: unknown }> {
  const expected = allGroups(await contactCandidates(db.prisma, accountId), oldestFirst)
    .map((g) => ({ ids: g.ids.slice(0, MAX_GROUP), score: g.score, reasons: g.reasons }))
    .sort((a, b) => b.score - a.score || oldestFirst(a.ids[0]!, b.ids[0]!));
  const kept = await keptGroups(db.prisma, accountId, 10_000_000);
  const at = expected.findIndex((g, i) => JSON.stringify(g) !== JSON.stringify(kept[i]));
  const equal = at < 0 && kept.length === expected.length;
  return { groups: expected.length, equal, ...(!equal && { first_difference: { expected: expected[at], kept: kept[at], kept_count: kept.length } }) };
}

/** `db` answering only the `rule`-th statement of contactCandidates (in the order it sends them), the others empty. */
function onlyRule(db: Prisma.TransactionClient, rule: number): Prisma.TransactionClient {
  let n = 0;
  return { $queryRaw: (sql: Prisma.Sql) => (n++ === rule ? db.$queryRaw(sql) : Promise.resolve([])) } as unknown as Prisma.TransactionClient;
}
