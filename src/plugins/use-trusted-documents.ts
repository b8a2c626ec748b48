import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import type { Plugin } from 'graphql-yoga';
import { persistedQueryNotFound, trustedDocumentsOnly } from '../errors.js';

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
