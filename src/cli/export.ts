import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { rename, stat, unlink } from 'node:fs/promises';
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
 * export; the file appears complete or not at all (written beside it, then renamed).
 */
export async function exportAccountToFile(db: PrismaClient, args: { account: string; out: string }): Promise<{ bytes: number }> {
  const { accountId } = validate(exportArgs, { accountId: args.account }, { accountId: '--account' });
  const account = await findAccount(db, accountId);
  const partial = `${args.out}.partial`;
  // Opened before the audit row is written: a path that cannot be written records nothing.
  const file = createWriteStream(partial);
  await once(file, 'open').catch((error: NodeJS.ErrnoException) => {
    throw new CliError([`cannot write ${args.out}: ${error.code === 'ENOENT' ? 'no such directory' : error.message}`]);
  });
  try {
    const log = await recordExport(db, { accountId, userId: account.ownerId, kind: ExportKind.account_json }, SYSTEM);
    const body = accountExportStream(db, accountId, log.createdAt) as WebReadableStream<Uint8Array>;
    await pipeline(Readable.fromWeb(body), file);
    await rename(partial, args.out);
  } catch (error) {
    file.destroy();
    await unlink(partial).catch(() => undefined);
    throw error;
  }
  return { bytes: (await stat(args.out)).size };
}

export const exportCommand: Command = {
  name: 'export',
  usage: '--account <uuid> --out <file.json>',
  summary: 'write the account export (JSON) to a file, streamed',
  async run(args, io) {
    const { values } = parseOptions(this, args, { account: { type: 'string' }, out: { type: 'string' } });
    const account = requireOption(this, values, 'account');
    const out = requireOption(this, values, 'out');
    const { bytes } = await io.withDb((db) => exportAccountToFile(db.prisma, { account, out }));
    io.out(`wrote ${out} (${bytes} bytes)`);
  },
};
