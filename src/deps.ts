import type { createPubSub } from 'graphql-yoga';
import type { KnownUsers } from './auth/viewer.js';
import type { ApiKeys } from './auth/api-keys.js';
import type { TokenClaims } from './auth/token.js';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import type { Poller } from './db/poller.js';
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
  /** The import worker (src/imports/worker.ts), in-process (PGlite) or in its thread (src/imports/thread.ts), where this instance runs one. */
  imports?: Worker | null;
  /** Uploads under way, per caller and account (Redis when configured); in this process's memory when absent. */
  uploads?: UploadSlots;
  /** The threads that draw invoice PDFs (src/invoices/pdf-pool.ts); the app starts one from `config.pdf` when absent. */
  pdfs?: PdfPool;
};

// The shapes of what AppDeps holds are said here, and what makes each (events/, webhooks/,
// graphql/persisted.ts, imports/) imports its shape from here: the request context (src/context.ts),
// below every domain, names them without importing the runtime that builds them.

/** What resolvers need of the events machinery (src/events-runtime.ts openEvents). */
export type Events = {
  bus: EventBus;
  /** Null in production without WEBHOOK_SECRET_KEY: webhooks are refused (docs/security.md). */
  box: SecretBox | null;
  policy: TargetPolicy;
  worker: Worker | null;
  close(): Promise<void>;
};

/** An account's live events, each its envelope (src/events/envelope.ts) as JSON text (src/events/bus.ts). */
export type EventBus = ReturnType<typeof createPubSub<{ accountEvents: [accountId: string, envelope: string] }>>;

/** Seals and opens webhook signing secrets, each bound to its endpoint (src/webhooks/secret.ts). */
export type SecretBox = { seal(secret: string, boundTo: string): string; open(sealed: string, boundTo: string): string };

/** Where webhooks may go (src/webhooks/target.ts): private addresses only outside production, or when allowed. */
export type TargetPolicy = { production: boolean; allowPrivate: boolean };

/** A worker in the background (the events' relay, the import worker): a poller (src/db/poller.ts). */
export type Worker = Poller;

/**
 * Draws invoice PDFs off the event loop, a bounded pool of threads (docs/decisions.md §26): `draw`
 * takes an invoice's document (src/invoices/invoice-document.ts) and rejects with
 * SERVICE_UNAVAILABLE when its queue is full.
 */
export type PdfPool = { draw(document: object): Promise<Buffer>; close(): Promise<void> };

/** Where automatic persisted queries keep hash -> document text: Redis (shared by instances) or memory (src/graphql/persisted.ts). */
export type DocumentStore = {
  get(hash: string): Promise<string | null>;
  set(hash: string, query: string): Promise<void>;
  close(): Promise<void>;
};
