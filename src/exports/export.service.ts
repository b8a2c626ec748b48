import { z } from 'zod';
import { ExportKind, type ExportLog, type PrismaClient } from '../generated/prisma/client.js';
import { formatDate } from '../dates.js';
import { emit } from '../events/emit.js';
import type { Actor } from '../events/types.js';
import { uuid } from '../validation.js';

export const exportArgs = z.object({ accountId: uuid });
export type ExportArgs = z.output<typeof exportArgs>;

/** The download's name; its date is the UTC day the export was recorded (docs/decisions.md §6). */
export function exportFileName(log: Pick<ExportLog, 'kind' | 'accountId' | 'createdAt'>): string {
  const day = formatDate(log.createdAt);
  switch (log.kind) {
    case ExportKind.contacts_csv:
      return `contacts-${day}.csv`;
    case ExportKind.account_json:
      return `service-data-export-${log.accountId}-${day}.json`;
  }
}

/** Writes the audit row (who, which account, what, when) before any byte is produced. */
export async function recordExport(
  db: PrismaClient,
  entry: { accountId: string; userId: string | null; apiKeyId: string | null; kind: ExportKind },
  actor: Actor,
  query: { select?: object; include?: object } = {},
) {
  const { id } = await db.$transaction(async (tx) => {
    const log = await tx.exportLog.create({ data: entry });
    await emit(tx, { type: 'export.granted', accountId: log.accountId, actor, object: log });
    return log;
  });
  return db.exportLog.findUniqueOrThrow({ ...(query as object), where: { id } });
}
