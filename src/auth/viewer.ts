import type { PrismaClient } from '../generated/prisma/client.js';
import { forbidden, MESSAGES, unauthenticated } from '../errors.js';
import { isRefusedCrossSite, type OperationKind } from '../http/origin.js';
import { readToken, type TokenClaims } from './token.js';
import type { ApiKeyGrant, ApiKeys } from './api-keys.js';
import { looksLikeKey } from './api-key-secret.js';

/**
 * Who is calling: a person (a session token), or a system with an API key (`apiKey` set; `id` is
 * then the key's id, so limits count per key and nothing confuses it with a user).
 */
export type Viewer = { id: string; email: string | null; name: string | null; apiKey?: ApiKeyGrant };

export type ViewerDeps = {
  db: PrismaClient;
  verifyToken: (token: string) => Promise<TokenClaims>;
  cookieName: string;
  allowedOrigins: string[];
  knownUsers: KnownUsers;
  apiKeys: ApiKeys;
};

/**
 * Who is calling: 401 without a valid token; 403 when a cookie-authenticated request that changes
 * state comes from another site (a bearer token cannot be sent by a browser on its own, a cookie
 * can). `operation` is the kind of operation the request runs, when known before execution (REST).
 */
export async function resolveViewer(request: Request, deps: ViewerDeps, operation?: OperationKind): Promise<Viewer> {
  const found = readToken(request.headers, deps.cookieName);
  if (!found) throw unauthenticated();
  if (looksLikeKey(found.token)) {
    // A key is a bearer credential only: never read from a cookie (docs/decisions.md §15).
    const grant = found.source === 'bearer' ? await deps.apiKeys.authenticate(found.token) : null;
    if (!grant) throw unauthenticated();
    return { id: grant.id, email: null, name: null, apiKey: grant };
  }
  let claims: TokenClaims;
  try {
    claims = await deps.verifyToken(found.token);
  } catch {
    throw unauthenticated();
  }
  if (found.source === 'cookie' && isRefusedCrossSite(request, operation, deps.allowedOrigins)) {
    throw forbidden(MESSAGES.crossSite);
  }
  const viewer: Viewer = { id: claims.sub, email: claims.email ?? null, name: claims.name ?? null };
  await deps.knownUsers.ensure(deps.db, viewer);
  return viewer;
}

/**
 * The identity provider owns identities: a `sub` seen for the first time becomes a user row.
 * Remembers (boundedly) whom it has already written so a request costs no write.
 */
export class KnownUsers {
  private readonly seen = new Map<string, string>();
  constructor(private readonly capacity = 10_000) {}

  async ensure(db: PrismaClient, viewer: Viewer): Promise<void> {
    const fingerprint = `${viewer.email ?? ''}\u0000${viewer.name ?? ''}`;
    if (this.seen.get(viewer.id) === fingerprint) return;
    const profile = { email: viewer.email, name: viewer.name };
    await db.user.upsert({ where: { id: viewer.id }, create: { id: viewer.id, ...profile }, update: profile });
    if (this.seen.size >= this.capacity) this.seen.delete(this.seen.keys().next().value as string);
    this.seen.set(viewer.id, fingerprint);
  }
}
