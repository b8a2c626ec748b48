import { z } from 'zod';
import { loadOrCreateDevSecret } from '../auth/dev-secret.js';
import { mintToken } from '../auth/token.js';
import type { Config } from '../config.js';
import { usesDevAuth } from '../runtime.js';
import { optionalEmail, optionalText, uuid } from '../validation.js';
import { CliError, parseOptions, requireOption, validate, type Command } from './command.js';

const tokenInput = z.object({
  sub: uuid,
  email: optionalEmail,
  name: optionalText(200),
  expiresIn: z.string().regex(/^[1-9]\d{0,4}[smhdw]$/, 'Must be a number and a unit: s, m, h, d or w (e.g. 30m, 12h, 7d)'),
});

/** The HS256 secret the server verifies with: AUTH_JWT_SECRET, else the development secret in DATA_DIR. */
export async function signingSecret(config: Config): Promise<string> {
  if (config.auth.jwtSecret) return config.auth.jwtSecret;
  if (!usesDevAuth(config)) {
    throw new CliError(['AUTH_JWKS_URL is set without AUTH_JWT_SECRET: tokens come from your identity provider, this command cannot sign one']);
  }
  return loadOrCreateDevSecret(config.dataDir);
}

export const token: Command = {
  name: 'token',
  usage: '--user <uuid> [--email <e-mail>] [--name <name>] [--expires 7d]',
  summary: 'print a session token for a user, signed with AUTH_JWT_SECRET or the dev secret in DATA_DIR',
  async run(args, io) {
    const { values } = parseOptions(this, args, {
      user: { type: 'string' },
      email: { type: 'string' },
      name: { type: 'string' },
      expires: { type: 'string', default: '7d' },
    });
    const claims = validate(
      tokenInput,
      { sub: requireOption(this, values, 'user'), email: values.email, name: values.name, expiresIn: values.expires },
      { sub: '--user', email: '--email', name: '--name', expiresIn: '--expires' },
    );
    const config = io.config();
    const secret = await signingSecret(config);
    // The server enforces a configured issuer and audience, so the token carries them.
    io.out(
      await mintToken(secret, {
        sub: claims.sub.toLowerCase(),
        ...(claims.email ? { email: claims.email } : {}),
        ...(claims.name ? { name: claims.name } : {}),
        expiresIn: claims.expiresIn,
        issuer: config.auth.issuer,
        audience: config.auth.audience,
      }),
    );
  },
};
