import { createApiKey, createApiKeyInput } from '../apikeys/apikey.service.js';
import { parseScope, restScope } from '../scopes.js';
import { SYSTEM } from '../events/types.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { findAccount, parseOptions, requireOption, usageError, validate, type Command } from './command.js';

// Problems name the flag; a scope's problem names --scopes whichever item it is (scopes.2 -> scopes).
const FLAGS: Record<string, string> = { accountId: '--account', name: '--name', scopes: '--scopes', expiresAt: '--expires-at' };
const flagsFor = (count: number) => ({ ...FLAGS, ...Object.fromEntries(Array.from({ length: count }, (_, i) => [`scopes.${i}`, '--scopes'])) });

/**
 * Makes a key with the core's rules (docs/decisions.md §15); recorded as made by the system, since
 * an operator is nobody in the account. `scopes` as REST writes them: contacts:read,deals:write.
 */
export async function makeApiKey(db: PrismaClient, args: { account: string; name: string; scopes: string; expiresAt?: string }) {
  const given = args.scopes.split(',').map((s) => s.trim()).filter(Boolean);
  const expiresAt = args.expiresAt === undefined ? undefined : new Date(args.expiresAt);
  if (expiresAt && Number.isNaN(expiresAt.getTime())) throw usageError(apiKey, '--expires-at: Must be a date and time (ISO 8601)');
  const input = validate(
    createApiKeyInput,
    { accountId: args.account.toLowerCase(), name: args.name, scopes: given.map((s) => parseScope(s) ?? s), expiresAt },
    flagsFor(given.length),
  );
  await findAccount(db, input.accountId);
  return createApiKey(db, input, null, SYSTEM);
}

export const apiKey: Command = {
  name: 'api-key',
  usage: 'create --account <uuid> --name <name> --scopes <scope,...> [--expires-at <ISO 8601>]',
  summary: 'create an API key for an account and print its secret (shown once)',
  async run(args, io) {
    const { values, positionals } = parseOptions(
      this,
      args,
      { account: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' }, 'expires-at': { type: 'string' } },
      true,
    );
    if (positionals.length !== 1 || positionals[0] !== 'create') throw usageError(this, 'the only subcommand is "create"');
    const account = requireOption(this, values, 'account');
    const name = requireOption(this, values, 'name');
    const scopes = requireOption(this, values, 'scopes');
    const { apiKey: key, secret } = await io.withDb((db) => makeApiKey(db.prisma, { account, name, scopes, expiresAt: values['expires-at'] }));
    io.err(`API key ${key.id} "${key.name}" (${key.scopes.map((s) => restScope(s as never)).join(',')}) for account ${key.accountId}; the secret below is shown once:`);
    io.out(secret);
  },
};
