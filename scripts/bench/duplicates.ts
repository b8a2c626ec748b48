// node --import tsx scripts/bench/duplicates.ts -- [--contacts 100000] [--rounds 7]
// Account.duplicateContacts at --contacts contacts (docs/decisions.md §22: within a second at
// 100,000), timed as the service runs it (src/contacts/duplicates.ts), without HTTP. The bench
// account (seedBench's contacts, then 2% of them again as duplicates: the same e-mail with another
// case and a +tag, the same phone written otherwise, or a one-letter slip in the name at the same
// company) lives in a database of its own (BENCH_DATABASE_URL's server, `crm_bench_duplicates_<n>`),
// made when missing. Prints the candidates and groups found and the p50 / max of the rounds.
import { performance } from 'node:perf_hooks';
import { seedBench } from '../../src/cli/seed-bench.js';
import { openDatabase } from '../../src/db/client.js';
import { contactCandidates, duplicateContacts } from '../../src/contacts/duplicates.js';
import { ensureMigrated, intFlag, namedBenchDatabaseUrl, parseFlags } from './common.js';

const flags = parseFlags(process.argv.slice(2).filter((a) => a !== '--'), ['contacts', 'rounds']);
const contacts = intFlag(flags, 'contacts', 100_000, 1, 10_000_000);
const rounds = intFlag(flags, 'rounds', 7, 1, 100);
const url = namedBenchDatabaseUrl(`crm_bench_duplicates_${contacts}`);
const log = (line: string) => process.stderr.write(`${line}\n`);

await ensureMigrated(url);
const db = await openDatabase({ databaseUrl: url, dataDir: '', poolMax: 4 });
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
  const total = await db.prisma.contact.count({ where: { accountId: account.id } });
  const candidates = await contactCandidates(db.prisma, account.id);
  const times: number[] = [];
  let groups = 0;
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    groups = (await duplicateContacts(db.prisma, account.id, 25)).length;
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const p50 = times[Math.floor(times.length / 2)]!;
  const by = (reason: string) => candidates.filter((c) => c.reason === reason).length;
  console.log(JSON.stringify({
    contacts: total,
    candidates: { email: by('email'), phone: by('phone'), name: by('name') },
    groups,
    rounds,
    p50_ms: Math.round(p50),
    max_ms: Math.round(times.at(-1)!),
  }));
} finally {
  await db.close();
}
