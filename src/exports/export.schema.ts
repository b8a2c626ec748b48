/** Mutation.exportContacts · Mutation.exportAccount */
import { builder } from '../graphql/builder.js';
import { ACCOUNT_EXPORTS, CONTACT_EXPORTS } from '../graphql/limits.js';
import { checked } from '../graphql/rules.js';
import { userActor } from '../events/types.js';
import { MESSAGES } from '../errors.js';
import type { Viewer } from '../auth/viewer.js';
import { ExportKind } from '../generated/prisma/client.js';
import { exportArgs, exportFileName, recordExport, type ExportArgs } from './export.service.js';

const ExportKindEnum = builder.enumType(ExportKind, { name: 'ExportKind' });

/**
 * The rules half of an export: access, limits and the audit row. The bytes come from
 * contactsCsvStream / accountExportStream, which the REST layer streams after this succeeds.
 */
builder.prismaObject('ExportLog', {
  name: 'ExportTicket',
  keyScope: 'EXPORTS',
  fields: (t) => ({
    id: t.exposeID('id'),
    accountId: t.exposeID('accountId'),
    kind: t.expose('kind', { type: ExportKindEnum }),
    fileName: t.string({ resolve: (log) => exportFileName(log) }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

/** Who the audit row names: the user, or the API key that asked (docs/decisions.md §6, §15). */
const exporter = (viewer: Viewer) => (viewer.apiKey ? { userId: null, apiKeyId: viewer.id } : { userId: viewer.id, apiKeyId: null });

/** Why a retry of an export grants another (Mutation fields say whether they honour Idempotency-Key). */
const ONE_MORE_DOWNLOAD =
  'each call grants one more download, recorded in the audit log; the file streams from the database as it is read, so no stored answer could give it again';

builder.mutationFields((t) => ({
  exportContacts: t.prismaField({
    type: 'ExportLog',
    description: 'Any member; 5 per minute per user.',
    args: { accountId: t.arg.id({ required: true }) },
    rules: { access: 'member', scope: 'EXPORTS', input: exportArgs, limit: CONTACT_EXPORTS, notIdempotent: ONE_MORE_DOWNLOAD },
    resolve: async (query, _root, _args, ctx, info) => {
      const { viewer, input } = checked<ExportArgs>(info);
      return recordExport(ctx.db, { accountId: input.accountId, ...exporter(viewer!), kind: ExportKind.contacts_csv }, userActor(viewer), query);
    },
  }),
  exportAccount: t.prismaField({
    type: 'ExportLog',
    description: 'Owner only; once per hour per account, counting only calls that pass access.',
    args: { accountId: t.arg.id({ required: true }) },
    // Per account, so charged after access: 401 -> 400 -> 403 -> 429 (docs/decisions.md §2).
    rules: {
      access: 'owner',
      // A key with EXPORTS may take the account export too (docs/decisions.md §15).
      scope: 'EXPORTS',
      forbidden: MESSAGES.ownerOnlyExport,
      input: exportArgs,
      limit: ACCOUNT_EXPORTS,
      notIdempotent: ONE_MORE_DOWNLOAD,
    },
    resolve: async (query, _root, _args, ctx, info) => {
      const { viewer, input } = checked<ExportArgs>(info);
      return recordExport(ctx.db, { accountId: input.accountId, ...exporter(viewer!), kind: ExportKind.account_json }, userActor(viewer), query);
    },
  }),
}));
