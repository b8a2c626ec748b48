import type { Plugin } from 'graphql-yoga';
import { badInput, persistedQueryNotFound } from '../errors.js';
import type { DocumentStore } from '../deps.js';
import { sha256 } from '../config.js';
import { persistedQueryOf } from '../graphql/persisted.js';

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
