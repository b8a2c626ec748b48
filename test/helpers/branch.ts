// A branch of the repository as a developer makes one (docs/fields.md#adding-a-field-to-a-record):
// a copy of the tracked files in a repository of its own, the real node_modules linked in, where a
// test makes its edits, regenerates and runs commands; git's diff is then the branch's diff.
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './server-process.js';

const exec = promisify(execFile);

export type Branch = {
  dir: string;
  /** Runs a command in the copy; its output is a failure's message. */
  run(command: string, args: string[]): Promise<string>;
  /** Puts `line` after `after`, which the file must hold exactly once (a moved neighbour fails here, not silently). */
  insertAfter(file: string, after: string, line: string): Promise<void>;
  write(file: string, text: string): Promise<void>;
  /** The files the branch changed since its last commit, as `git add -A` stages them, sorted. */
  changed(): Promise<string[]>;
  /** Commits what changed: the next `changed()` names only what comes after. */
  commit(message: string): Promise<void>;
  remove(): Promise<void>;
};

export async function makeBranch(prefix: string): Promise<Branch> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  const run = async (command: string, args: string[]) => {
    const { stdout, stderr } = await exec(command, args, { cwd: dir, env: { ...process.env, NO_COLOR: '1' }, maxBuffer: 64 * 1024 * 1024 }).catch((error: { stdout: string; stderr: string }) => {
      throw new Error(`${command} ${args.join(' ')} failed:\n${error.stdout}\n${error.stderr}`);
    });
    return stdout + stderr;
  };
  const { stdout } = await exec('git', ['ls-files', '-z'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  for (const file of stdout.split('\0').filter(Boolean)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await copyFile(path.join(ROOT, file), path.join(dir, file));
  }
  await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  // A repository of its own, so that the branch's diff is git's; the link is not a folder, which .gitignore's `node_modules/` names.
  await run('git', ['init', '-q']);
  await writeFile(path.join(dir, '.git/info/exclude'), 'node_modules\n');
  const commit = async (message: string) => {
    await run('git', ['add', '-A']);
    await run('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.test', 'commit', '-q', '--no-verify', '-m', message]);
  };
  await commit('base');
  const write = async (file: string, text: string) => {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  };
  return {
    dir,
    run,
    write,
    async insertAfter(file, after, line) {
      const text = await readFile(path.join(dir, file), 'utf8');
      const parts = text.split(after);
      if (parts.length !== 2) throw new Error(`${file} holds ${JSON.stringify(after)} ${parts.length - 1} times, not once`);
      await writeFile(path.join(dir, file), text.replace(after, `${after}${line}`));
    },
    async changed() {
      await run('git', ['add', '-A']);
      return (await run('git', ['diff', '--cached', '--name-only'])).trim().split('\n').sort();
    },
    commit,
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** A fixture's tests as the branch ran them: how many, and the failures' messages. */
export type FixtureRun = { tests: number; failures: string[] };

/**
 * Places each fixture as a test file of the branch (after its diffs are taken) and runs them in one
 * Vitest run (one migrated template for all: test/global-setup.ts) with one type-check of the branch
 * beside it: each fixture's tests, by fixture. The type-check's failure fails the call.
 */
export async function runFixtures(branch: Branch, fixtures: readonly string[]): Promise<Record<string, FixtureRun>> {
  const targets = new Map<string, string>();
  for (const fixture of fixtures) {
    const target = `test/fixtures/${path.basename(fixture).replace('.fixture.ts', '.test.ts')}`;
    await branch.write(target, await readFile(path.join(ROOT, fixture), 'utf8'));
    targets.set(target, fixture);
  }
  const report = path.join(branch.dir, 'fixtures.json');
  // A failing test fails the run's command: its report still says which, so the output is kept for when there is none.
  const tests = branch.run('npx', ['vitest', 'run', '--config', 'test/vitest.config.ts', '--reporter=json', `--outputFile=${report}`, ...targets.keys()]).catch((error: Error) => error.message);
  const [, output] = await Promise.all([branch.run('npx', ['tsc', '-p', 'tsconfig.json', '--noEmit']), tests]);
  type Report = { testResults: { name: string; message?: string; assertionResults: { status: string; fullName: string; failureMessages: string[] }[] }[] };
  const text = await readFile(report, 'utf8').catch(() => {
    throw new Error(`the fixtures' run wrote no report:\n${output}`);
  });
  const { testResults } = JSON.parse(text) as Report;
  const runs: Record<string, FixtureRun> = Object.fromEntries(fixtures.map((fixture) => [fixture, { tests: 0, failures: ['not run'] }]));
  for (const file of testResults) {
    const fixture = targets.get(path.relative(branch.dir, file.name));
    if (!fixture) continue;
    const failed = file.assertionResults.filter((a) => a.status !== 'passed');
    runs[fixture] = {
      tests: file.assertionResults.length,
      failures: [...(file.message ? [file.message] : []), ...failed.map((a) => `${a.fullName}: ${a.failureMessages.join('\n')}`)],
    };
  }
  return runs;
}
