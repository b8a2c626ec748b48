import type { KnownUsers } from './auth/viewer.js';
import type { ApiKeys } from './auth/api-keys.js';
import type { TokenClaims } from './auth/token.js';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import type { DocumentStore } from './graphql/persisted.js';
import type { Events } from './events-runtime.js';
import type { ImportWorker } from './imports/worker.js';
import type { UploadSlots } from './ratelimit/upload-slots.js';
import type { Logger } from './logger.js';
import type { RateLimiter } from './ratelimit/limiter.js';

/**
 * Everything a running app needs from outside; main.ts (src/runtime.ts) and the tests each build one.
 * Its own module so the context and the plugins can name it without importing the app (no import loop).
 */
export type AppDeps = {
  config: Config;
  db: Database;
  limiter: RateLimiter;
  verifyToken: (token: string) => Promise<TokenClaims>;
  knownUsers: KnownUsers;
  /** API keys: the cache of checked keys and how revocations reach it (src/auth/api-keys.ts). */
  apiKeys: ApiKeys;
  log: Logger;
  /** Automatic persisted queries' documents (Redis when configured); in this process's memory when absent. */
  documents?: DocumentStore;
  /** Live events, webhook secrets and the delivery worker (src/events-runtime.ts). */
  events: Events;
  /** Signs and checks list cursors (src/graphql/keyset.ts loadCursorKey). */
  cursorKey: Buffer;
  /** The import worker (src/imports/worker.ts), where this instance runs one. */
  imports?: ImportWorker | null;
  /** Uploads under way, per caller and account (Redis when configured); in this process's memory when absent. */
  uploads?: UploadSlots;
};
