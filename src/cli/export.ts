import { createWriteStream, existsSync } from 'node:fs';
import { once } from 'node:events';
import { link, rename, stat, unlink } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { accountExportStream } from '../exports/account-json.js';
import { exportArgs, recordExport } from '../exports/export.service.js';
import { SYSTEM } from '../events/types.js';
import { ExportKind, type PrismaClient } from '../generated/prisma/client.js';
import { CliError, findAccount, parseOptions, requireOption, validate, type Command } from './command.js';

/**
 * Streams the account export document (the same one GET /api/v1/account/export sends) into `out`.
 * It is recorded in the export audit log under the account's owner, the only person the API lets
 * export; the file appears complete or not at all (written beside it, then moved into place). An
 * existing file is replaced only with `force`: an export is personal data, a mistyped path must not eat a file.
 */
export async function exportAccountToFile(db: PrismaClient, args: { account: string; out: string; force?: boolean }): Promise<{ bytes: number }> {
  const { accountId } = validate(exportArgs, { accountId: args.account }, { accountId: '--account' });
  const exists = () => new CliError([`${args.out} already exists; pass --force to replace it`]);
  if (!args.force && existsSync(args.out)) throw exists();
  const account = await findAccount(db, accountId);
  const partial = `${args.out}.partial`;
  // Opened before the audit row is written: a path that cannot be written records nothing.
  const file = createWriteStream(partial);
  await once(file, 'open').catch((error: NodeJS.ErrnoException) => {
    throw new CliError([`cannot write ${args.out}: ${error.code === 'ENOENT' ? 'no such directory' : error.message}`]);
  });
  try {
    const log = await recordExport(db, { accountId, userId: account.ownerId, apiKeyId: null, kind: ExportKind.account_json }, SYSTEM);
    const body = accountExportStream(db, accountId, log.createdAt) as WebReadableStream<Uint8Array>;
    await pipeline(Readable.fromWeb(body), file);
    if (args.force) await rename(partial, args.out);
    else await placeNew(partial, args.out).catch((error: NodeJS.ErrnoException) => Promise.reject(error.code === 'EEXIST' ? exists() : error));
  } catch (error) {
    file.destroy();
    await unlink(partial).catch(() => undefined);
    throw error;
  }
  return { bytes: (await stat(args.out)).size };
}

/** Moves `from` to `to` unless `to` exists (EEXIST), atomically: a hard link fails rather than replace. */
async function placeNew(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch (error) {
    // A file system without hard links: check, then rename (a narrow race, but no silent loss as before).
    if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
    if (existsSync(to)) throw Object.assign(new Error(`${to} exists`), { code: 'EEXIST' });
    await rename(from, to);
    return;
  }
  await unlink(from);
}

export const exportCommand: Command = {
  name: 'export',
  usage: '--account <uuid> --out <file.json> [--force]',
  summary: 'write the account export (JSON) to a file, streamed; an existing file is replaced only with --force',
  async run(args, io) {
    const { values } = parseOptions(this, args, { account: { type: 'string' }, out: { type: 'string' }, force: { type: 'boolean', default: false } });
    const account = requireOption(this, { account: values.account }, 'account');
    const out = requireOption(this, { out: values.out }, 'out');
    const { bytes } = await io.withDb((db) => exportAccountToFile(db.prisma, { account, out, force: values.force }));
    io.out(`wrote ${out} (${bytes} bytes)`);
  },
};
