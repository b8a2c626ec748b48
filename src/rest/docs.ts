/** GET /api/v1/openapi.json (the generated contract) · GET /api/v1/docs (Swagger UI, served from swagger-ui-dist) */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Plugin } from 'graphql-yoga';
import { Response } from '../http/response.js';
import { fromHttpError, restErrorResponse } from './errors.js';
import { buildOpenApi } from './openapi.js';

export const OPENAPI_PATH = '/api/v1/openapi.json';
export const DOCS_PATH = '/api/v1/docs';

const swaggerDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The only files served from swagger-ui-dist: a fixed list, so no path ever reaches the disk. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>CRM &amp; billing API · reference</title>
    <link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css" />
    <link rel="icon" type="image/png" href="${DOCS_PATH}/favicon-32x32.png" sizes="32x32" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
    <script src="${DOCS_PATH}/swagger-ui-standalone-preset.js"></script>
    <script src="${DOCS_PATH}/init.js"></script>
  </body>
</html>
`;

// No inline script, so the page runs under a strict CSP; validatorUrl null: no call to swagger.io.
const INIT = `window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(OPENAPI_PATH)},
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  persistAuthorization: false,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
});
`;

const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

const file = (body: BodyInit, type: string, cache: string, extra: Record<string, string> = {}) =>
  new Response(body, { status: 200, headers: { 'Content-Type': type, 'Cache-Control': cache, ...extra } });

/** A forwarded header's value as set by the outermost trusted proxy (as src/http/client-ip.ts reads X-Forwarded-For). */
function forwarded(request: Request, name: string, trustProxy: number): string | undefined {
  if (trustProxy === 0) return undefined;
  const hops = (request.headers.get(name) ?? '').split(',').map((part) => part.trim()).filter(Boolean);
  return hops[hops.length - trustProxy] ?? hops[0];
}

const HOST = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/;

/**
 * Where clients reach the service: PUBLIC_URL when set, else the host the request was sent to: the
 * one a trusted proxy forwards (X-Forwarded-Host/-Proto, as far as TRUST_PROXY trusts), else `Host`.
 */
export function serverUrlOf(request: Request, url: URL, options: { publicUrl?: string; trustProxy: number }): string {
  if (options.publicUrl) return options.publicUrl;
  const host = forwarded(request, 'x-forwarded-host', options.trustProxy);
  const proto = forwarded(request, 'x-forwarded-proto', options.trustProxy);
  if (host && HOST.test(host)) return `${proto === 'https' || proto === 'http' ? proto : url.protocol.slice(0, -1)}://${host}`;
  return url.origin;
}

/** Serves the OpenAPI document (built once, at start; its server per request) and the interactive reference; no CDN. */
export function useApiReference(options: { cookieName: string; publicUrl?: string; trustProxy: number }): Plugin {
  const built = buildOpenApi({ cookieName: options.cookieName, serverUrl: '' });
  // One string per server (the last four hosts; 766 KB each): the same string each time is what the compression
  // plugin keeps coded (src/plugins/use-compression.ts), not 766 KB stringified per request.
  const documents = new Map<string, string>();
  const document = (serverUrl: string) => {
    let text = documents.get(serverUrl);
    if (text === undefined) {
      if (documents.size >= 4) documents.delete(documents.keys().next().value!);
      text = JSON.stringify({ ...built, servers: [{ ...(built.servers as object[])[0], url: serverUrl }] });
      documents.set(serverUrl, text);
    }
    return text;
  };
  const assets = new Map<string, Promise<Buffer>>();
  const asset = (name: string) => {
    let content = assets.get(name);
    if (!content) assets.set(name, (content = readFile(path.join(swaggerDir, name))));
    return content;
  };

  return {
    onRequest: async ({ request, url, endResponse }) => {
      const { pathname } = url;
      if (pathname !== OPENAPI_PATH && pathname !== DOCS_PATH && !pathname.startsWith(`${DOCS_PATH}/`)) return;
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        return endResponse(restErrorResponse(fromHttpError('METHOD_NOT_ALLOWED', ['GET', 'HEAD'])));
      }
      if (pathname === OPENAPI_PATH) return endResponse(file(document(serverUrlOf(request, url, options)), 'application/json; charset=utf-8', 'no-cache'));
      if (pathname === DOCS_PATH) {
        return endResponse(file(PAGE, 'text/html; charset=utf-8', 'no-cache', { 'Content-Security-Policy': CSP }));
      }
      const name = pathname.slice(DOCS_PATH.length + 1);
      if (name === 'init.js') return endResponse(file(INIT, 'text/javascript; charset=utf-8', 'no-cache'));
      const type = Object.hasOwn(ASSETS, name) ? ASSETS[name]! : undefined;
      if (!type) return endResponse(restErrorResponse(fromHttpError('ROUTE_NOT_FOUND')));
      return endResponse(file(new Uint8Array(await asset(name)), type, 'public, max-age=86400'));
    },
  };
}
