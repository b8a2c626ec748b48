// docs/fields.md#adding-a-field-to-a-record, proved on a real branch: a copy of the repository's
// tracked files takes the throwaway field `preferredName` as a developer adds it (one spec line, the
// column and its migration), regenerates, type-checks, and runs test/fixtures/new-contact-field.fixture.ts
// against a database migrated with the column (PGlite, or PostgreSQL when DATABASE_URL is set).
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/server-process.js';

const exec = promisify(execFile);
const MIGRATION = 'prisma/migrations/29991231000000_contact_preferred_name/migration.sql';
const FIXTURE = 'test/fixtures/new-contact-field.fixture.ts';

/** The branch's diff: each line goes after a neighbour named once, so a moved neighbour fails here, not silently. */
const EDITS = [
  {
    file: 'src/contacts/contact.fields.ts',
    after: "  { name: 'ownerId', type: 'ID', rule: uuid.nullish(), description: { create: OWNER, update: OWNER } },\n",
    line: "  { name: 'preferredName', type: 'String', rule: optionalText(50), max: 50, csv: 'Preferred Name', import: true, createAnswer: true },\n",
  },
  { file: 'prisma/schema.prisma', after: '  ownerId     String?       @map("owner_id") @db.Uuid\n', line: '  preferredName String?     @map("preferred_name") @db.VarChar(50)\n' },
];

let copy: string;
/** Runs a command in the copy; its output is the failure's message. */
const run = async (command: string, args: string[]) => {
  const { stdout, stderr } = await exec(command, args, { cwd: copy, env: { ...process.env, NO_COLOR: '1' }, maxBuffer: 64 * 1024 * 1024 }).catch((error: { stdout: string; stderr: string }) => {
    throw new Error(`${command} ${args.join(' ')} failed:\n${error.stdout}\n${error.stderr}`);
  });
  return stdout + stderr;
};

beforeAll(async () => {
  copy = await mkdtemp(path.join(tmpdir(), 'crm-new-field-'));
  const { stdout } = await exec('git', ['ls-files', '-z'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  for (const file of stdout.split('\0').filter(Boolean)) {
    await mkdir(path.dirname(path.join(copy, file)), { recursive: true });
    await copyFile(path.join(ROOT, file), path.join(copy, file));
  }
  await symlink(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
  // A repository of its own, so that the branch's diff is git's; the link is not a folder, which .gitignore's `node_modules/` names.
  await run('git', ['init', '-q']);
  await writeFile(path.join(copy, '.git/info/exclude'), 'node_modules\n');
  await run('git', ['add', '-A']);
  await run('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.test', 'commit', '-q', '--no-verify', '-m', 'base']);
}, 120_000);

afterAll(async () => {
  if (copy) await rm(copy, { recursive: true, force: true });
});

describe('a field added to contacts on a branch', () => {
  it('takes one spec line, the column and its migration, and reaches GraphQL, REST, the CSV export, imports, events and the account export', async () => {
    for (const { file, after, line } of EDITS) {
      const text = await readFile(path.join(copy, file), 'utf8');
      expect(text.split(after), `${file} holds its neighbour once`).toHaveLength(2);
      await writeFile(path.join(copy, file), text.replace(after, `${after}${line}`));
    }
    await mkdir(path.dirname(path.join(copy, MIGRATION)), { recursive: true });
    await writeFile(path.join(copy, MIGRATION), 'ALTER TABLE "contacts" ADD COLUMN "preferred_name" VARCHAR(50);\n');

    await run('npm', ['run', 'generate']);
    await run('git', ['add', '-A']);
    const changed = (await run('git', ['diff', '--cached', '--name-only'])).trim().split('\n');
    expect(changed).toEqual([
      MIGRATION,
      'prisma/schema.prisma',
      'schema.graphql',
      'src/contacts/contact.fields.ts',
      'src/rest/operations/contact.fields.graphql',
      'src/rest/operations/generated.ts',
    ]);

    // Placed as a test file only now, so it is no part of the branch's diff.
    await mkdir(path.join(copy, 'test/fixtures'), { recursive: true });
    await copyFile(path.join(ROOT, FIXTURE), path.join(copy, 'test/fixtures/new-contact-field.test.ts'));
    const [, tests] = await Promise.all([
      run('npx', ['tsc', '-p', 'tsconfig.json', '--noEmit']),
      run('npx', ['vitest', 'run', 'test/fixtures/new-contact-field.test.ts']),
    ]);
    expect(tests).toMatch(/Tests\s+7 passed \(7\)/);
  }, 600_000); // a ceiling against a hang: it generates, type-checks and migrates a database of its own
});
