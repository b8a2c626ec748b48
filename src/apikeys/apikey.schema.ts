/** Mutation.createApiKey · Mutation.revokeApiKey · Account.apiKeys (docs/decisions.md §15) */
import { SETTINGS } from '../graphql/limits.js';
import { builder } from '../graphql/builder.js';
import { checked } from '../graphql/rules.js';
import { forbidden, MESSAGES } from '../errors.js';
import type { Context } from '../context.js';
import type { ApiKey } from '../generated/prisma/client.js';
import { userActor } from '../events/types.js';
import { API_SCOPES } from '../scopes.js';
import { apiKeyArgs, createApiKey, createApiKeyInput, revokeApiKey, type CreateApiKeyInput } from './apikey.service.js';

const ApiScopeEnum = builder.enumType('ApiScope', {
  description: 'What an API key may do; REST and the CLI write them in lower case with a colon (contacts:read).',
  values: API_SCOPES,
});

const ApiKeyRef = builder.prismaObject('ApiKey', {
  keyScope: false,
  description: 'A credential of a system that integrates with the account. Its secret is never shown again.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    prefix: t.exposeString('prefix', { description: 'The public part of the secret: crm_sk_<prefix>_...' }),
    scopes: t.field({ type: [ApiScopeEnum], resolve: (key) => key.scopes as (typeof API_SCOPES)[number][] }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    createdBy: t.relation('createdBy', { nullable: true, description: 'Null when an operator made it with the CLI' }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true, description: 'Written at most once a minute' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
  }),
});

const CreatedRef = builder.objectRef<{ apiKey: ApiKey; secret: string }>('ApiKeyCreated').implement({
  fields: (t) => ({
    apiKey: t.field({ type: ApiKeyRef, resolve: (c) => c.apiKey }),
    secret: t.exposeString('secret', { description: 'crm_sk_...: shown here only, never again' }),
  }),
});

/**
 * The most keys the cost (docs/graphql.md#cost-and-budget) counts Account.apiKeys as holding: nothing
 * enforces a number, and revoked keys stay listed, so this is the cost's assumption (ten creations a
 * minute at most; an account rotating a key a week for two years stays under it).
 */
const KEYS_PER_ACCOUNT = 100;

builder.prismaObjectFields('Account', (t) => ({
  apiKeys: t.prismaField({
    type: ['ApiKey'],
    maxItems: KEYS_PER_ACCOUNT,
    description: 'Owner only, with a session token. Oldest first, revoked ones included.',
    resolve: async (query, account, _args, ctx) => {
      if ((await ctx.viewer()).apiKey) throw forbidden(MESSAGES.notForKeys);
      if ((await ctx.role(account.id)) !== 'owner') throw forbidden(MESSAGES.ownerOnly);
      return ctx.db.apiKey.findMany({ ...query, where: { accountId: account.id }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    },
  }),
}));

const CreateInput = builder.inputType('CreateApiKeyInput', {
  fields: (t) => ({
    accountId: t.id({ required: true }),
    name: t.string({ required: true, description: 'At most 100 characters' }),
    scopes: t.field({ type: [ApiScopeEnum], required: true, description: 'At least one' }),
    expiresAt: t.field({ type: 'DateTime', description: 'In the future; none = until revoked' }),
  }),
});

const keyTarget = ({ id }: { id: string }, ctx: Context) => ctx.db.apiKey.findUnique({ where: { id }, select: { id: true, accountId: true } });

// No `scope`: a key never manages keys (src/graphql/rules.ts refuses it).
builder.mutationFields((t) => ({
  createApiKey: t.field({
    type: CreatedRef,
    description: 'Owner only, with a session token. The answer is the only place the secret appears.',
    args: { input: t.arg({ type: CreateInput, required: true }) },
    rules: {
      access: 'owner',
      forbidden: MESSAGES.ownerOnly,
      input: createApiKeyInput,
      from: 'input',
      limit: SETTINGS,
      notIdempotent:
        'the answer is the only copy of the secret, which the service keeps as a hash only, so no stored answer can show it again; ' +
        'a retry makes a second key: revoke the one never used (lastUsedAt null)',
    },
    resolve: (_root, _args, ctx, info) => {
      const { viewer, input } = checked<CreateApiKeyInput>(info);
      return createApiKey(ctx.db, input, viewer!.id, userActor(viewer));
    },
  }),
  revokeApiKey: t.prismaField({
    type: 'ApiKey',
    description: 'Owner only, with a session token. Stops the key on every instance within a second.',
    args: { id: t.arg.id({ required: true }) },
    rules: { access: 'owner', forbidden: MESSAGES.ownerOnly, input: apiKeyArgs, target: keyTarget, hidden: 'not-found', idempotent: true },
    resolve: async (query, _root, _args, ctx, info) => {
      const { viewer, target, write } = checked<unknown, { id: string }>(info);
      const key = await write(async (tx) => {
        await revokeApiKey(tx, target, userActor(viewer));
        // Never the secret's hash in an answer a retry is kept for (the account export holds those).
        const { secretHash: _, ...revoked } = await tx.apiKey.findUniqueOrThrow({ ...query, where: { id: target.id } });
        return revoked;
      });
      ctx.apiKeys.revoked(); // committed: this instance forgets at once, Redis tells the others
      return key as ApiKey; // no field of ApiKey reads secretHash
    },
  }),
}));
