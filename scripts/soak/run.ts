/**
 * npm run soak [-- --duration <seconds>] (default 300): two instances of the service on a private
 * PostgreSQL and Redis (scripts/soak/services.ts; never the machine's own), mixed traffic (lists,
 * creates, exports, form submissions at 20x their limit from three addresses) while PostgreSQL is
 * stopped and started, frozen (SIGSTOP) and thawed, Redis is stopped and started, and one instance
 * is SIGTERMed and restarted. Prints the figures of docs/faults.md "Soak" and exits 1 when one misses
 * its bound. Not part of npm test.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { mintToken } from '../../src/auth/token.js';
import { PrivatePostgres, PrivateRedis, startServer, type ServerProcess } from './services.js';

const { values } = parseArgs({ options: { duration: { type: 'string', default: '300' } } });
const DURATION_MS = Number(values.duration) * 1000;
if (!Number.isFinite(DURATION_MS) || DURATION_MS < 30_000) throw new Error('--duration must be at least 30 (seconds)');
const SECRET = randomUUID() + randomUUID();
const STATEMENT_TIMEOUT_MS = 10_000;
const FORM_LIMIT = 5; // per address per minute (createFormSubmission's rules)
/** Members making requests, each pausing this long between two: about 18 requests a second in all. */
const MEMBERS = 40;
const USER_PAUSE_MS = 2_200;
const ADDRESSES = ['203.0.113.10', '203.0.113.11', '203.0.113.12'];
const log = (msg: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

type Kind = 'list' | 'create' | 'export' | 'submit';
type Answer = { kind: Kind; at: number; ms: number; status?: number; error?: string; name?: string; address?: string; page?: string };

const rssMb = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Math.round(Number(line?.split(/\s+/)[1] ?? 0) / 1024);
};

async function main() {
  const dir = await mkdtemp(path.join(tmpdir(), 'crm-soak-'));
  const postgres = await PrivatePostgres.create(dir);
  const redis = await PrivateRedis.create();
  const env = { DATABASE_URL: postgres.url, REDIS_URL: redis.url, AUTH_JWT_SECRET: SECRET, TRUST_PROXY: '1' };
  const start = () => startServer(env);
  const instances: ServerProcess[] = [];
  const rss: { name: string; start: number; end: number }[] = [];
  try {
    instances.push(await start(), await start());
    log(`instances at ${instances.map((i) => i.baseUrl).join(', ')}`);
    const owner = await mintToken(SECRET, { sub: randomUUID() });
    const gql = async (query: string, variables: Record<string, unknown> = {}) => {
      const r = await fetch(`${instances[0]!.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${owner}` },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await r.json()) as { data: any; errors?: unknown };
      if (body.errors) throw new Error(JSON.stringify(body.errors));
      return body.data;
    };
    const accountId = (await gql('mutation { createAccount(input: { name: "Soak" }) { id } }')).createAccount.id as string;
    const formId = (
      await gql('mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }', {
        input: { accountId, name: 'Soak', fields: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' }] },
      })
    ).createLeadForm.id as string;
    const members: string[] = [];
    for (let i = 0; i < MEMBERS; i++) {
      const id = randomUUID();
      await gql('mutation ($input: AddTeamMemberInput!) { addTeamMember(input: $input) { userId } }', { input: { accountId, userId: id } });
      members.push(await mintToken(SECRET, { sub: id }));
    }
    rss.push(...instances.map((i, n) => ({ name: `instance ${n + 1}`, start: rssMb(i.proc.pid!), end: 0 })));

    const answers: Answer[] = [];
    const stopping = new Set<ServerProcess>();
    let seq = 0;
    let running = true;
    const call = async (kind: Kind, token: string, address?: string) => {
      const n = ++seq;
      // As a load balancer would: an instance that is stopping or restarting gets no new requests.
      const live = instances.filter((i) => !stopping.has(i));
      const instance = live[n % live.length]!;
      const name = `Soak ${n}`;
      const page = `/soak/${n}`;
      const [url, init]: [string, RequestInit] =
        kind === 'list'
          ? [`/api/v1/contacts?account_id=${accountId}&page_size=25`, { headers: { authorization: `Bearer ${token}` } }]
          : kind === 'export'
            ? [`/api/v1/contacts/export?account_id=${accountId}`, { headers: { authorization: `Bearer ${token}` } }]
            : kind === 'create'
              ? ['/api/v1/contacts', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ account_id: accountId, first_name: name }) }]
              : [`/api/v1/forms/${formId}/submit`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': address! }, body: JSON.stringify({ data: { email: `soak-${n}@example.com` }, metadata: { page } }) }];
      const at = Date.now();
      const answer: Answer = { kind, at, ms: 0, ...(kind === 'create' ? { name } : {}), ...(kind === 'submit' ? { address, page } : {}) };
      try {
        const r = await fetch(`${instance.baseUrl}${url}`, { ...init, signal: AbortSignal.timeout(60_000) });
        await r.arrayBuffer();
        answer.status = r.status;
      } catch (error) {
        answer.error = String((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name);
      }
      answer.ms = Date.now() - at;
      answers.push(answer);
    };
    // Users: lists, creates and now and then an export, each user in turn, paced under their own
    // limits (60 lists, 30 creates, 5 exports a minute) so that their traffic reaches the database all
    // through the run, faults included: a user past their limit is answered 429 before any SQL, and
    // would prove nothing about a stopped or frozen database.
    const userLoops = members.map(async (token, w) => {
      await sleep(w * (USER_PAUSE_MS / members.length)); // spread over the pause, not in step
      for (let i = w; running; i++) {
        await call(i % 20 === 0 ? 'export' : i % 2 === 0 ? 'list' : 'create', token);
        await sleep(USER_PAUSE_MS);
      }
    });
    // Form submissions: 100 a minute from each address, 20x the limit.
    const submitLoops = ADDRESSES.map(async (address) => {
      while (running) {
        void call('submit', '', address);
        await sleep(600);
      }
    });

    const at = (fraction: number) => sleep(Math.max(0, begin + DURATION_MS * fraction - Date.now()));
    const begin = Date.now();
    await at(0.15);
    log('PostgreSQL stops');
    postgres.stop('fast');
    await sleep(5_000);
    postgres.start();
    log('PostgreSQL started');
    await at(0.35);
    log('PostgreSQL frozen (SIGSTOP)');
    postgres.freeze();
    await sleep(5_000);
    postgres.thaw();
    log('PostgreSQL thawed');
    await at(0.55);
    log('Redis stops');
    await redis.stop();
    await sleep(8_000);
    await redis.start();
    log('Redis started');
    await at(0.75);
    log('instance 2: SIGTERM');
    const leaving = instances[1]!;
    rss[1]!.end = rssMb(leaving.proc.pid!);
    stopping.add(leaving);
    leaving.proc.kill('SIGTERM');
    const code = await leaving.exit;
    log(`instance 2 exited ${code}; restarting`);
    instances[1] = await start();
    rss.push({ name: 'instance 2 (restarted)', start: rssMb(instances[1].proc.pid!), end: 0 });
    await at(1);
    running = false;
    await Promise.all([...userLoops, ...submitLoops]);
    await sleep(2_000); // the last submissions in flight
    rss[0]!.end = rssMb(instances[0]!.proc.pid!);
    rss[2]!.end = rssMb(instances[1]!.proc.pid!);

    // What the database holds.
    const contacts = new Set((await postgres.query<{ first_name: string }>('SELECT first_name FROM contacts WHERE account_id = $1', [accountId])).map((r) => r.first_name));
    const pages = new Set((await postgres.query<{ page: string }>('SELECT page FROM form_submissions WHERE form_id = $1', [formId])).map((r) => r.page));
    const acked = (a: Answer) => (a.kind === 'create' ? a.status === 201 : a.status === 200);
    const isStored = (a: Answer) => (a.kind === 'create' ? contacts.has(a.name!) : pages.has(a.page!));
    const writes = answers.filter((a) => a.kind === 'create' || a.kind === 'submit');
    const missing = writes.filter((a) => acked(a) && !isStored(a)).length;
    const errorPresent = writes.filter((a) => !acked(a) && isStored(a)).length;
    // Accepted submissions per address in any 60 s window (sliding), the worst.
    let worstPerMinute = 0;
    for (const address of ADDRESSES) {
      const times = answers.filter((a) => a.kind === 'submit' && a.address === address && a.status === 200).map((a) => a.at).sort((x, y) => x - y);
      for (let i = 0, j = 0; i < times.length; i++) {
        while (times[i]! - times[j]! >= 60_000) j++;
        worstPerMinute = Math.max(worstPerMinute, i - j + 1);
      }
    }
    const byStatus: Record<string, number> = {};
    for (const a of answers) byStatus[String(a.status ?? a.error)] = (byStatus[String(a.status ?? a.error)] ?? 0) + 1;
    const fiveHundreds = answers.filter((a) => a.status !== undefined && a.status >= 500 && a.status !== 503).length;
    const transport = answers.filter((a) => a.error !== undefined).length;
    const longest = Math.max(...answers.map((a) => a.ms));
    const growth = Math.max(...rss.filter((r) => r.end > 0).map((r) => r.end - r.start));

    const rows: [string, string, string, boolean][] = [
      ['requests', String(answers.length), '', true],
      ['answers by status', Object.entries(byStatus).map(([k, v]) => `${k}: ${v}`).join(', '), '', true],
      ['5xx other than 503', String(fiveHundreds), '0', fiveHundreds === 0],
      ['transport errors (no answer)', String(transport), '0', transport === 0],
      ['acknowledged writes missing', String(missing), '0', missing === 0],
      ['error-answered writes present', String(errorPresent), '0', errorPresent === 0],
      ['form submissions accepted per address per minute (worst)', String(worstPerMinute), `<= ${FORM_LIMIT * 2}`, worstPerMinute <= FORM_LIMIT * 2],
      ['longest answer (ms)', String(longest), `<= ${STATEMENT_TIMEOUT_MS + 2_000}`, longest <= STATEMENT_TIMEOUT_MS + 2_000],
      ...rss.map((r): [string, string, string, boolean] => [`RSS ${r.name} (MB, start -> end)`, `${r.start} -> ${r.end}`, '', true]),
      ['RSS growth (MB, worst)', String(growth), '< 100', growth < 100],
    ];
    process.stdout.write(`\nSoak: ${values.duration} s, 2 instances, ${os.cpus().length} cores, Node ${process.version}\n\n`);
    process.stdout.write('| figure | value | bound | ok |\n| --- | --- | --- | --- |\n');
    for (const [figure, value, bound, ok] of rows) process.stdout.write(`| ${figure} | ${value} | ${bound} | ${bound ? (ok ? 'yes' : 'NO') : ''} |\n`);
    const failed = rows.filter(([, , bound, ok]) => bound && !ok);
    if (failed.length > 0) {
      process.stdout.write(`\nmissed: ${failed.map(([f]) => f).join('; ')}\n`);
      process.exitCode = 1;
    }
  } finally {
    for (const instance of instances) if (instance.proc.exitCode === null && instance.proc.signalCode === null) instance.proc.kill('SIGKILL');
    postgres.thaw();
    await redis.stop();
    postgres.stop('immediate');
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`soak: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
