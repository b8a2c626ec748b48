import { emit } from './events/emit.js';
import { emitRow } from './events/record.js';
import { SYSTEM, type EventType } from './events/types.js';
import { mintToken } from './auth/token.js';
import type { Config } from './config.js';
import type { PrismaClient } from './generated/prisma/client.js';

// Fixed ids so the README's examples work against every fresh `npm start`.
export const DEMO = {
  ownerId: '00000000-0000-4000-8000-000000000001',
  memberId: '00000000-0000-4000-8000-000000000002',
  accountId: '00000000-0000-4000-8000-0000000000a1',
  formId: '00000000-0000-4000-8000-0000000000f1',
  /** The first contact (GraphiQL's ContactWithRelations example). */
  contactId: '00000000-0000-4000-8000-0000000000c1',
  /** The first contact's deal (GraphiQL's SetDealStatus example). */
  dealId: '00000000-0000-4000-8000-0000000000d1',
} as const;

const PEOPLE = [
  ['Ada', 'Lovelace', 'ada@example.com', 'Analytical Engines Ltd', 'client', 'referral'],
  ['Grace', 'Hopper', 'grace@example.com', 'COBOL Systems', 'lead', 'website'],
  ['Alan', 'Turing', 'alan@example.com', 'Bletchley Consulting', 'past_client', 'repeat_client'],
  ['Katherine', 'Johnson', 'katherine@example.com', 'Orbital Mechanics Inc', 'client', 'social_media'],
  ['Linus', 'Torvalds', 'linus@example.com', 'Kernel Works', 'vendor', 'cold_outreach'],
  ['Margaret', 'Hamilton', 'margaret@example.com', 'Apollo Software', 'lead', 'advertising'],
] as const;

/**
 * Where a person on this machine reaches a server listening on host:port, for the banner's curl lines:
 * a wildcard host (0.0.0.0, ::) is reached on loopback. `null` port: not known before the server starts (PORT=0).
 */
export function localBaseUrl(host: string, port: number | null): string {
  const reach = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${reach.includes(':') ? `[${reach}]` : reach}:${port ?? '<port>'}`;
}

/** The one command that seeds the demo account (docs/cli.md), for a start that finds none. */
export const SEED_DEMO_COMMAND = 'npm run cli -- seed demo';

/**
 * What the CLI must share with the server for its token and curl lines to work there: the database,
 * the development secret's folder, the address. The CLI reads .env as the server does, so only those
 * the real environment set are carried on the command line.
 */
const SHARED_WITH_CLI = ['DATA_DIR', 'HOST', 'PORT'] as const;

/** Where the server got its variables: the environment it ran in and the names .env filled in. */
export type StartEnv = { env: NodeJS.ProcessEnv; fromDotenv: readonly string[] };

/** `command` prefixed with the variables it needs from the real environment (SHARED_WITH_CLI), quoted for a shell. */
function withSharedEnv(command: string, { env, fromDotenv }: StartEnv): string {
  const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;
  const shared = SHARED_WITH_CLI.filter((name) => env[name]?.trim() && !fromDotenv.includes(name)).map((name) => `${name}=${quote(env[name]!)}`);
  return [...shared, command].join(' ');
}

/**
 * That command for the database the service started on: with its DATABASE_URL, since without one
 * the CLI seeds the embedded database and the token it prints is refused here (and with DATA_DIR,
 * HOST, PORT when the real environment set them). A password in the URL is not printed (logs keep
 * the banner): `<password>` stands in its place.
 */
export function seedDemoCommand(databaseUrl: string, start: StartEnv = { env: {}, fromDotenv: [] }): string {
  const url = new URL(databaseUrl);
  if (url.password) url.password = '<password>';
  return withSharedEnv(`DATABASE_URL='${decodeURI(url.toString())}' ${SEED_DEMO_COMMAND}`, start);
}

/**
 * How to get a token when the server does not sign them with its development secret: with
 * AUTH_JWT_SECRET, the CLI signs one (given the same secret, issuer and audience): for the demo
 * owner, or after the command that seeds the demo account (on the embedded database, with the server
 * stopped: one process at a time). With AUTH_JWKS_URL alone, the identity provider issues them.
 * Never a token itself: a configured secret's tokens are not for logs. Printed outside production only.
 */
export function signInHint(
  config: { auth: Pick<Config['auth'], 'jwtSecret' | 'jwksUrl'>; databaseUrl?: string },
  demo: boolean,
  start: StartEnv,
): string {
  if (!config.auth.jwtSecret) {
    return '\nSign-in: tokens come from your identity provider (AUTH_JWKS_URL); this server only verifies them. Accounts: npm run cli -- account:create --owner <its user id> (docs/cli.md)\n';
  }
  const needed = (['AUTH_JWT_SECRET', 'AUTH_JWT_ISSUER', 'AUTH_JWT_AUDIENCE'] as const).filter((name) => start.env[name] && !start.fromDotenv.includes(name));
  const lines = ['', 'Sign-in: tokens are HS256 JWTs signed with AUTH_JWT_SECRET; the CLI makes one (docs/cli.md).'];
  if (needed.length > 0) {
    const them = needed.length > 1 ? 'them' : 'it';
    lines.push(`The CLI needs the same ${needed.join(', ')} as this server: export ${them} in its shell, or put ${them} in .env (both read it).`);
  }
  const token = (user: string) => `npm run cli -- token --user ${user}`; // signs with AUTH_JWT_SECRET: no database, no DATA_DIR
  if (demo) lines.push(`  demo owner's token: ${token(DEMO.ownerId)}`);
  else if (config.databaseUrl) lines.push(`  demo account and its owner's token: ${seedDemoCommand(config.databaseUrl, start)}`);
  else lines.push(`  demo account and its owner's token (stop this server first: the embedded database is one process's): ${withSharedEnv(SEED_DEMO_COMMAND, start)}`);
  lines.push(`  any user's token: ${token('<user uuid>')}`, '');
  return lines.join('\n');
}

export const demoExists = async (db: PrismaClient) => (await db.account.findUnique({ where: { id: DEMO.accountId }, select: { id: true } })) !== null;

/** A token's issuer and audience, when the server enforces them (AUTH_JWT_ISSUER, AUTH_JWT_AUDIENCE). */
type Audience = Pick<Config['auth'], 'issuer' | 'audience'>;

/** Seeds the demo account once (idempotent) and returns a banner with a fresh token and curl lines. */
export async function seedDemo(db: PrismaClient, secret: string, audience: Audience = {}) {
  if (!(await demoExists(db))) await createDemoData(db);
  return demoAccess(secret, audience);
}

/**
 * For a start on PostgreSQL, whose database is never seeded unasked: the demo owner's token and
 * banner when the demo account is there, else a line naming the command that seeds it.
 */
export async function demoOnStart(
  db: PrismaClient,
  secret: string,
  databaseUrl: string,
  start?: StartEnv,
  audience: Audience = {},
): Promise<{ token: string | null; banner: (baseUrl: string) => string }> {
  if (await demoExists(db)) return demoAccess(secret, audience);
  return { token: null, banner: () => `\nNo demo account in this database. To create it and get a token for its owner: ${seedDemoCommand(databaseUrl, start)}\n` };
}

async function demoAccess(secret: string, { issuer, audience }: Audience = {}) {
  const token = await mintToken(secret, { sub: DEMO.ownerId, email: 'owner@demo.example', name: 'Demo Owner', expiresIn: '7d', issuer, audience });
  return {
    token,
    banner: (baseUrl: string) =>
      [
        '',
        'Demo account ready. Token for the demo owner (valid 7 days):',
        `  export TOKEN=${token}`,
        'Try:',
        `  curl -s -H "Authorization: Bearer $TOKEN" "${baseUrl}/api/v1/contacts?account_id=${DEMO.accountId}"`,
        `  curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"query":"{ me { id accounts { id name } } }"}' ${baseUrl}/graphql`,
        '',
      ].join('\n'),
  };
}

async function createDemoData(db: PrismaClient): Promise<void> {
  await db.$transaction(async (tx) => {
    // Each demo record comes with its event (docs/events.md), so the timeline and Account.events show them.
    const made = async <T extends { accountId: string }>(type: EventType, model: string, row: Promise<T>) => {
      const created = await row;
      await emitRow(tx, type, model, SYSTEM, created);
      return created;
    };
    await tx.user.createMany({
      data: [
        { id: DEMO.ownerId, email: 'owner@demo.example', name: 'Demo Owner' },
        { id: DEMO.memberId, email: 'member@demo.example', name: 'Demo Member' },
      ],
      skipDuplicates: true,
    });
    const account = await tx.account.create({ data: { id: DEMO.accountId, name: 'Demo Company', ownerId: DEMO.ownerId } });
    await emit(tx, { type: 'account.created', accountId: account.id, actor: SYSTEM, object: account });
    await made('member.added', 'TeamMember', tx.teamMember.create({ data: { accountId: DEMO.accountId, userId: DEMO.memberId, email: 'member@demo.example' } }));
    const stages = await Promise.all(
      ['Qualified', 'Proposal', 'Negotiation'].map((name, position) =>
        made('pipeline_stage.created', 'PipelineStage', tx.pipelineStage.create({ data: { accountId: DEMO.accountId, name, position } })),
      ),
    );
    for (const [index, [firstName, lastName, email, company, contactType, source]] of PEOPLE.entries()) {
      const contact = await made('contact.created', 'Contact', tx.contact.create({
        data: { ...(index === 0 ? { id: DEMO.contactId } : {}), accountId: DEMO.accountId, firstName, lastName, email, company, contactType, source },
      }));
      await made('deal.created', 'Deal', tx.deal.create({
        data: {
          ...(index === 0 ? { id: DEMO.dealId } : {}),
          accountId: DEMO.accountId,
          contactId: contact.id,
          stageId: stages[index % stages.length]!.id,
          title: `${company} project`,
          value: 1000 * (index + 1),
          probability: 20 + index * 10,
          expectedCloseDate: new Date(Date.UTC(2027, index, 15)),
        },
      }));
      await made('invoice.created', 'Invoice', tx.invoice.create({
        data: {
          accountId: DEMO.accountId,
          contactId: contact.id,
          invoiceNumber: `INV-${String(index + 1).padStart(6, '0')}`,
          amount: 250.5 * (index + 1),
          status: index % 2 === 0 ? 'sent' : 'draft',
          dueDate: new Date(Date.UTC(2027, index, 1)),
        },
      }));
    }
    await tx.account.update({ where: { id: DEMO.accountId }, data: { nextInvoiceNumber: PEOPLE.length + 1 } });
    await made('form.created', 'LeadForm', tx.leadForm.create({
      data: {
        id: DEMO.formId,
        accountId: DEMO.accountId,
        name: 'Website contact form',
        fields: {
          create: [
            { key: 'name', label: 'Your name', type: 'text', required: true, mapsTo: 'first_name', position: 0 },
            { key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email', position: 1 },
            { key: 'message', label: 'Message', type: 'textarea', position: 2 },
          ],
        },
      },
    }));
  });
}
