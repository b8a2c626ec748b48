import type { RestResult, TestApp, TestUser } from './app.js';

type QueryParams = Record<string, string | number>;

/** `?name=value&...`, each value as its text (so a test can send `page=2.5` or `page_size=abc`). */
const queryString = (params: QueryParams): string =>
  `?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]))}`;

/**
 * The list (GET `path?account_id=...`) and create (POST `path`) calls of one account-scoped REST
 * resource, as `as` (null = anonymous). `app` is read at call time: files create their app in beforeAll.
 */
export function restResource(app: () => TestApp, path: string) {
  return {
    list: (accountId: string, as: TestUser | null, params: QueryParams = {}): Promise<RestResult> =>
      app().rest('GET', `${path}${queryString({ account_id: accountId, ...params })}`, { as }),
    create: (as: TestUser | null, body: unknown): Promise<RestResult> => app().rest('POST', path, { as, body }),
  };
}
