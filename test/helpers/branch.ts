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
  /** The files the branch changed, as `git add -A` stages them, sorted. */
  changed(): Promise<string[]>;
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
  await run('git', ['add', '-A']);
  await run('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.test', 'commit', '-q', '--no-verify', '-m', 'base']);
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
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Places a fixture as a test file of the branch (after its diff is taken) and runs it with a type-check beside it: the run's output. */
export async function runFixture(branch: Branch, fixture: string): Promise<string> {
  const target = `test/fixtures/${path.basename(fixture).replace('.fixture.ts', '.test.ts')}`;
  await branch.write(target, await readFile(path.join(ROOT, fixture), 'utf8'));
  const [, tests] = await Promise.all([branch.run('npx', ['tsc', '-p', 'tsconfig.json', '--noEmit']), branch.run('npx', ['vitest', 'run', target])]);
  return tests;
}
