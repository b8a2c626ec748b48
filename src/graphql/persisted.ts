import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import type { Plugin } from 'graphql-yoga';
import { Redis } from 'ioredis';
import { badInput, persistedQueryNotFound, trustedDocumentsOnly } from '../errors.js';
import { closeRedis } from '../redis.js';
import type { DocumentStore } from '../deps.js';
import { sha256 } from '../config.js';

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
const persistedQueryOf = (extensions: unknown): PersistedQuery | null => {
  const found = (extensions as { persistedQuery?: Partial<PersistedQuery> } | undefined)?.persistedQuery;
  return found?.version === 1 && typeof found.sha256Hash === 'string' ? (found as PersistedQuery) : null;
};

/**
 * Apollo's automatic persisted queries (docs/decisions.md §11, docs/graphql.md#persisted-queries): a
 * request with `extensions.persistedQuery.sha256Hash` and no query runs the stored document, or is
 * PERSISTED_QUERY_NOT_FOUND; the client then sends hash and text once, which are checked and stored.
 * The logic of @graphql-yoga/plugin-apq 3.6, written here because that package's peer dependency on
 * @graphql-tools/utils 10 conflicts with graphql-rate-limit's (8), and with our error factories.
 */
export function useAutomaticPersistedQueries(store: DocumentStore): Plugin {
  return {
    onParams: async ({ params, setParams }) => {
      const persisted = persistedQueryOf(params.extensions);
      if (!persisted) return;
      if (params.query == null) {
        const query = await store.get(persisted.sha256Hash);
        if (query === null) throw persistedQueryNotFound();
        setParams({ ...params, query });
        return;
      }
      if (sha256(params.query) !== persisted.sha256Hash) {
        throw badInput({ 'extensions.persistedQuery.sha256Hash': ['Must be the SHA-256 of the query'] });
      }
      await store.set(persisted.sha256Hash, params.query);
    },
  };
}

/**
 * GRAPHQL_TRUSTED_DOCUMENTS (docs/decisions.md §11): only the listed documents run, named by their
 * hash as an APQ request names them; any other document, or a query sent as text, is refused. REST
 * is not affected: its operations run in-process, past the request parsing this hooks into.
 */
export function useTrustedDocuments(documents: Record<string, string>): Plugin {
  return usePersistedOperations({
    getPersistedOperation: (hash) => documents[hash] ?? null,
    customErrors: {
      notFound: () => persistedQueryNotFound(),
      keyNotFound: () => trustedDocumentsOnly(),
      persistedQueryOnly: () => trustedDocumentsOnly(),
    },
  }) as Plugin;
}

/**
 * The document an operation sent over graphql-ws runs: the onParams hooks above read HTTP requests
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
