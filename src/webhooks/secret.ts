import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { loadOrCreateDevSecret } from '../auth/dev-secret.js';
import type { Config } from '../config.js';
import type { SecretBox } from '../deps.js';

// Signing secrets are stored encrypted (AES-256-GCM, node:crypto) under a key from configuration,
// never in the database: a dump alone cannot sign (docs/security.md "Webhook secrets"). Encryption,
// not a hash, because HMAC signing needs the secret itself.

const VERSION = 'v1';

/** A Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export const newSigningSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

export function secretBox(keyMaterial: string): SecretBox {
  const key = Buffer.from(hkdfSync('sha256', keyMaterial, Buffer.alloc(0), 'webhook signing secrets v1', 32));
  return {
    seal(secret, boundTo) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(boundTo)); // the endpoint's id: a ciphertext copied to another row does not open
      const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return [VERSION, iv, cipher.getAuthTag(), body].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
    },
    open(sealed, boundTo) {
      const [version, iv, tag, body] = sealed.split('.');
      if (version !== VERSION || !iv || !tag || !body) throw new Error('not a sealed webhook secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(boundTo));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

/**
 * The secrets a delivery is signed with now, newest first: the endpoint's, and for the overlap after
 * a rotation the one it replaced, so a receiver still verifying with the old one misses nothing
 * (docs/events.md#rotating-the-secret).
 */
export function signingSecrets(
  box: SecretBox,
  endpoint: { id: string; secretCiphertext: string; previousSecretCiphertext: string | null; previousSecretExpiresAt: Date | null },
  now = new Date(),
): string[] {
  const current = box.open(endpoint.secretCiphertext, endpoint.id);
  const { previousSecretCiphertext: previous, previousSecretExpiresAt: until } = endpoint;
  return previous && until && until > now ? [current, box.open(previous, endpoint.id)] : [current];
}

export const DEV_KEY_FILE = 'dev-webhook-key';

/**
 * WEBHOOK_SECRET_KEY; outside production without it, a development key kept in DATA_DIR (like the
 * dev JWT secret). In production without it: null, and webhooks are refused (docs/security.md).
 */
export async function loadSecretBox(config: Config): Promise<SecretBox | null> {
  if (config.events.webhookSecretKey) return secretBox(config.events.webhookSecretKey);
  if (config.production) return null;
  return secretBox(await loadOrCreateDevSecret(config.dataDir, DEV_KEY_FILE));
}
