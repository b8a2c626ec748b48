import { Redis } from 'ioredis';
import { persistedQueryNotFound, trustedDocumentsOnly } from '../errors.js';
import { closeRedis } from '../redis.js';
import type { DocumentStore } from '../deps.js';

const MAX_MEMORY_DOCUMENTS = 1_000;
const REDIS_TTL_SECONDS = 24 * 3600;

/** This process only, bounded: the oldest document goes first (a client that misses it resends the text). */
export function memoryDocumentStore(max = MAX_MEMORY_DOCUMENTS): DocumentStore {
  const documents = new Map<string, string>();
  return {
    get: async (hash) => documents.get(hash) ?? null,
    set: async (hash, query) => {
      documents.delete(hash);
      documents.set(hash, query);
      if (documents.size > max) documents.delete(documents.keys().next().value as string);
    },
    close: async () => documents.clear(),
  };
}

/**
 * Shared by every instance, each document kept a day after it was last sent. A Redis failure costs
 * only a round trip: the client is told PERSISTED_QUERY_NOT_FOUND and sends the text, which runs.
 */
export function redisDocumentStore(url: string, prefix = 'apq:'): DocumentStore {
  const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 500 });
  client.on('error', () => undefined); // the rate limiter's store already reports Redis outages
  // Without an offline queue a command fails until the first connection: the first calls wait for it (briefly).
  const started = new Promise<void>((resolve) => {
    setTimeout(resolve, 2_000).unref();
    client.once('ready', () => resolve());
    client.once('error', () => resolve());
  });
  return {
    get: async (hash) => {
      await started;
      return client.get(prefix + hash).catch(() => null);
    },
    set: async (hash, query) => {
      await started;
      await client.set(prefix + hash, query, 'EX', REDIS_TTL_SECONDS).catch(() => undefined);
    },
    close: () => closeRedis(client),
  };
}

type PersistedQuery = { version: 1; sha256Hash: string };
export const persistedQueryOf = (extensions: unknown): PersistedQuery | null => {
  const found = (extensions as { persistedQuery?: Partial<PersistedQuery> } | undefined)?.persistedQuery;
  return found?.version === 1 && typeof found.sha256Hash === 'string' ? (found as PersistedQuery) : null;
};

/**
 * The document an operation sent over graphql-ws runs: the onParams hooks (src/plugins/use-automatic-persisted-queries.ts, use-trusted-documents.ts) read HTTP requests
 * only. Under GRAPHQL_TRUSTED_DOCUMENTS, the listed document its hash names, as over HTTP; else the
 * text it carries (graphql-ws always carries one, so automatic persisted queries have nothing to do).
 */
export function documentOf(params: { query: string; extensions?: unknown }, trusted: Record<string, string> | undefined): string {
  if (!trusted) return params.query;
  const persisted = persistedQueryOf(params.extensions);
  if (!persisted) throw trustedDocumentsOnly();
  const document = trusted[persisted.sha256Hash];
  if (document === undefined) throw persistedQueryNotFound();
  return document;
}
