/** Mutation.exportContacts · Mutation.exportAccount */
import { builder } from '../graphql/builder.js';
import { guard } from '../graphql/guard.js';
import { LIMITS } from '../graphql/limits.js';
import { MESSAGES } from '../errors.js';
import { ExportKind } from '../generated/prisma/client.js';
import { exportArgs, exportFileName, recordExport } from './export.service.js';

const ExportKindEnum = builder.enumType(ExportKind, { name: 'ExportKind' });

/**
 * The rules half of an export: access, limits and the audit row. The bytes come from
 * contactsCsvStream / accountExportStream, which the REST layer streams after this succeeds.
 */
builder.prismaObject('ExportLog', {
  name: 'ExportTicket',
  fields: (t) => ({
    id: t.exposeID('id'),
    accountId: t.exposeID('accountId'),
    kind: t.expose('kind', { type: ExportKindEnum }),
    fileName: t.string({ resolve: (log) => exportFileName(log) }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.mutationFields((t) => ({
  exportContacts: t.prismaField({
    type: 'ExportLog',
    description: 'Any member; 5 per minute per user.',
    args: { accountId: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { viewer, input } = await guard(ctx, { schema: exportArgs, args, limit: LIMITS.exportContacts });
      return recordExport(ctx.db, { accountId: input.accountId, userId: viewer.id, kind: ExportKind.contacts_csv }, query);
    },
  }),
  exportAccount: t.prismaField({
    type: 'ExportLog',
    description: 'Owner only; once per hour per account, counting only calls that pass access.',
    args: { accountId: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => {
      // limit is per account, so guard charges it after access: 401 -> 400 -> 403 -> 429 (decisions.md §2).
      const { viewer, input } = await guard(ctx, {
        schema: exportArgs,
        args,
        role: 'owner',
        forbiddenMessage: MESSAGES.ownerOnlyExport,
        limit: LIMITS.exportAccount,
      });
      return recordExport(ctx.db, { accountId: input.accountId, userId: viewer.id, kind: ExportKind.account_json }, query);
    },
  }),
}));
