import { z } from 'zod';
import type { ApiKey, Prisma, PrismaClient } from '../generated/prisma/client.js';
import { emit } from '../events/emit.js';
import type { Actor } from '../events/types.js';
import { requiredText, uuid } from '../validation.js';
import { API_SCOPES } from '../scopes.js';
import { newSecret } from '../auth/api-key-secret.js';

/** docs/decisions.md §15: a name up to 100 characters, at least one scope, an expiry still ahead. */
export const createApiKeyInput = z.object({
  accountId: uuid,
  name: requiredText(100),
  scopes: z
    .array(z.enum(API_SCOPES, { message: `Unknown scope; one of ${API_SCOPES.join(', ')}` }))
    .min(1, 'At least one scope')
    .transform((scopes) => [...new Set(scopes)]),
  expiresAt: z
    .date()
    .nullish()
    .refine((at) => !at || at.getTime() > Date.now(), 'Must be in the future'),
});
export type CreateApiKeyInput = z.output<typeof createApiKeyInput>;

export const apiKeyArgs = z.object({ id: uuid });

/** A new key and its secret, which the answer shows once; the row keeps a SHA-256 of it only. */
export async function createApiKey(db: PrismaClient, input: CreateApiKeyInput, createdById: string | null, actor: Actor) {
  const { secret, prefix, hash } = newSecret();
  return db.$transaction(async (tx) => {
    const apiKey = await tx.apiKey.create({
      data: { accountId: input.accountId, name: input.name, scopes: input.scopes, expiresAt: input.expiresAt ?? null, prefix, secretHash: hash, createdById },
    });
    await emit(tx, { type: 'api_key.created', accountId: apiKey.accountId, actor, object: apiKey });
    return { apiKey, secret };
  });
}

/**
 * Revokes a key (once: revoking it again changes nothing and answers it as it is). The trigger on
 * api_keys notifies every instance at commit; the caller also tells its registry (ctx.apiKeys).
 */
export async function revokeApiKey(tx: Prisma.TransactionClient, key: Pick<ApiKey, 'id'>, actor: Actor): Promise<ApiKey> {
  const [revoked] = await tx.$queryRaw<{ id: string }[]>`
    UPDATE api_keys SET revoked_at = now() WHERE id = ${key.id}::uuid AND revoked_at IS NULL RETURNING id`;
  const row = await tx.apiKey.findUniqueOrThrow({ where: { id: key.id } });
  if (revoked) await emit(tx, { type: 'api_key.revoked', accountId: row.accountId, actor, object: row });
  return row;
}
