/**
 * decisions.md §1 as a rule about the request (docs/faults.md "Cross-site GraphQL mutations"): a
 * cookie-authenticated POST /graphql from a site not in ALLOWED_ORIGINS that holds a mutation is
 * refused whole, before anything executes: HTTP 403 with a GraphQL error body. Bearer requests and
 * queries are not concerned (a query meets the per-field rule in resolveViewer).
 */
import { getOperationAST, Kind, parse, type DocumentNode } from 'graphql/index.js';
import type { Plugin } from 'graphql-yoga';
import { crossSiteRefusal } from '../errors.js';
import { isRefusedCrossSite } from '../http/origin.js';
import { readToken } from '../auth/token.js';

/** Whether the operation the request runs is a mutation (any mutation when it names none among several). */
function runsMutation(query: string | undefined, operationName: string | undefined): boolean {
  if (!query) return false;
  let document: DocumentNode;
  try {
    document = parse(query);
  } catch {
    return false; // not a document: Yoga answers its own 400, nothing executes
  }
  const operation = getOperationAST(document, operationName);
  if (operation) return operation.operation === 'mutation';
  return document.definitions.some((d) => d.kind === Kind.OPERATION_DEFINITION && d.operation === 'mutation');
}

export function useCrossSiteRule({ cookieName, allowedOrigins }: { cookieName: string; allowedOrigins: string[] }): Plugin {
  return {
    onParams: ({ request, params, setResult }) => {
      if (request.method !== 'POST' || readToken(request.headers, cookieName)?.source !== 'cookie') return;
      if (!isRefusedCrossSite(request, 'mutation', allowedOrigins)) return;
      if (!runsMutation(params.query, params.operationName)) return;
      setResult({ errors: [crossSiteRefusal()] });
    },
  };
}
