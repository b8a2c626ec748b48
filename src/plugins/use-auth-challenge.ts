import { STATUS_CODES } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import { bearerChallenge } from '../auth/token.js';

/**
 * Every 401 says how to authenticate (`WWW-Authenticate: Bearer`, RFC 9110 §15.5.2), REST and /graphql.
 * /graphql answers an unauthenticated field with 200 and an UNAUTHENTICATED error (a GraphQL answer can
 * hold data too); it carries the same challenge, which RFC 9110 §11.6.1 allows on any answer.
 * Also fills an empty reason phrase: a Response built with Node's own class (a download's) has
 * statusText "", which @whatwg-node/server writes as "HTTP/1.1 401 " (docs/www-authenticate.md).
 */
export function useAuthChallenge(cookieName: string): Plugin {
  const unauthenticated = new WeakSet<Request>(); // GraphQL results that held an UNAUTHENTICATED error
  return {
    onExecute: ({ args }) => ({
      onExecuteDone: ({ result }) => {
        const errors = 'errors' in result ? result.errors : undefined;
        if (errors?.some((e) => e.extensions?.code === 'UNAUTHENTICATED')) unauthenticated.add((args.contextValue as { request: Request }).request);
      },
    }),
    onResponse: ({ request, response, setResponse, fetchAPI }) => {
      if (response.status === 401 || unauthenticated.has(request)) {
        response.headers.set('WWW-Authenticate', bearerChallenge(request.headers, cookieName));
      }
      if (!response.statusText) {
        const { status, headers } = response;
        setResponse(new fetchAPI.Response(response.body, { status, statusText: STATUS_CODES[status] ?? 'Unknown', headers }));
      }
    },
  };
}
