// GET /i/{token}: the client's invoice page, through Mutation.viewInvoicePage (the first view of a
// sent invoice moves it to viewed, unless it is a HEAD or a link preview: the core's rules, which read
// the request's method and User-Agent); GET /i/{token}/pdf: its PDF, through
// Query.publicInvoice (a read), drawn in the PDF pool's threads and kept per version
// (src/invoices/invoice-pdf-cache.ts; 503 with Retry-After past the pool's queue, docs/decisions.md §26).
// A transport beside the lead-form page (src/pages/form-page.plugin.ts): the operations run inside
// Yoga with the same context, limits and masking.
import { randomBytes } from 'node:crypto';
import { Kind, parse, validate, type DocumentNode, type GraphQLError } from 'graphql/index.js';
import type { Plugin, YogaServerInstance } from 'graphql-yoga';
import type { AppDeps } from '../deps.js';
import type { Context, ServerContext } from '../context.js';
import { isDatabaseUnavailable } from '../db/client.js';
import { decodeComponent } from '../http/hostile-bytes.js';
import { Response } from '../http/response.js';
import { InvoiceDocumentFieldsFragmentDoc } from '../rest/operations/generated.js';
import { schema } from '../schema.js';
import type { InvoiceDocument } from '../invoices/invoice-document.js';
import { invoicePageCsp, renderInvoiceMessagePage, renderInvoicePage } from '../invoices/invoice-page.js';
import { invoicePdfFor } from '../invoices/invoice-pdf-cache.js';

const PATH = /^\/i\/([^/]+)(\/pdf)?\/?$/;

/** The operation with the document's fields (src/rest/operations/invoices.graphql: one selection for the page and both PDFs). */
const withDocumentFields = (text: string): DocumentNode => ({
  kind: Kind.DOCUMENT,
  definitions: [...parse(text).definitions, ...InvoiceDocumentFieldsFragmentDoc.definitions],
});
const VIEW = withDocumentFields(`mutation InvoicePage($token: String!) { viewInvoicePage(token: $token) { ...InvoiceDocumentFields } }`);
const PDF = withDocumentFields(`query InvoicePagePdf($token: String!) { publicInvoice(token: $token) { ...InvoiceDocumentFields } }`);

type Refusal = { status: number; title: string; text: string; headers?: Record<string, string> };
type Outcome = { document: InvoiceDocument; token: string; context: Context } | Refusal;

const NOT_FOUND: Refusal = { status: 404, title: 'Invoice not found', text: 'This invoice does not exist, or its link is no longer valid. Please ask the sender for a new link.' };

/** What every answer carries: nothing cached, nothing indexed, the token never sent on as a referrer. */
const PRIVATE = {
  'Cache-Control': 'no-store',
  'X-Robots-Tag': 'noindex, nofollow',
  'Referrer-Policy': 'no-referrer',
};

function htmlResponse(request: Request, status: number, html: string, nonce: string, headers: Record<string, string> = {}): Response {
  return new Response(request.method === 'HEAD' ? null : html, {
    status,
    headers: { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': invoicePageCsp(nonce), ...PRIVATE, ...headers },
  });
}

function refusal(request: Request, outcome: Refusal): Response {
  const nonce = randomBytes(16).toString('base64');
  return htmlResponse(request, outcome.status, renderInvoiceMessagePage(outcome.title, outcome.text, nonce), nonce, outcome.headers);
}

export function useInvoicePage(deps: Pick<AppDeps, 'log'>): Plugin<Context> {
  for (const document of [VIEW, PDF]) {
    const problems = validate(schema, document);
    if (problems.length > 0) throw new Error(`invoice page operation is invalid: ${problems.map((e) => e.message).join('; ')}`);
  }
  let yoga: YogaServerInstance<ServerContext, Context>;
  return {
    onYogaInit: ({ yoga: instance }) => {
      yoga = instance as unknown as YogaServerInstance<ServerContext, Context>;
    },
    onRequest: async ({ request, url, serverContext, endResponse }) => {
      const match = PATH.exec(url.pathname);
      if (!match) return;
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        endResponse(refusal(request, { status: 405, title: 'Method not allowed', text: 'This page can only be read.', headers: { Allow: 'GET, HEAD' } }));
        return;
      }
      const pdf = Boolean(match[2]);
      const outcome = await load(yoga, deps, pdf ? PDF : VIEW, match[1]!, request, serverContext as ServerContext);
      if (!('document' in outcome)) return endResponse(refusal(request, outcome));
      if (pdf) {
        let bytes: Buffer | null = null;
        if (request.method !== 'HEAD') {
          try {
            bytes = await invoicePdfFor(outcome.context.db, { pageToken: outcome.token }, outcome.document, outcome.context.pdfs, deps.log);
          } catch (error) {
            return endResponse(refusal(request, failure(error, deps))); // past the pool's queue: 503 with Retry-After
          }
        }
        endResponse(new Response(bytes as Uint8Array<ArrayBuffer> | null, {
          status: 200,
          headers: { 'Content-Type': 'application/pdf', 'Content-Disposition': `attachment; filename="${outcome.document.fileName}"`, ...PRIVATE },
        }));
        return;
      }
      const nonce = randomBytes(16).toString('base64');
      endResponse(htmlResponse(request, 200, renderInvoicePage(outcome.document, `/i/${match[1]}/pdf`, nonce), nonce));
    },
  };
}

async function load(
  yoga: YogaServerInstance<ServerContext, Context>,
  deps: Pick<AppDeps, 'log'>,
  operation: DocumentNode,
  rawToken: string,
  request: Request,
  serverContext: ServerContext,
): Promise<Outcome> {
  // A path that does not decode, or with hostile bytes (a NUL, not UTF-8): no invoice has that token.
  const token = decodeComponent(rawToken);
  if (token === null) return NOT_FOUND;
  try {
    const enveloped = yoga.getEnveloped({ request, ...serverContext } as never);
    const contextValue = await enveloped.contextFactory();
    const result = (await enveloped.execute({ schema, document: operation, variableValues: { token }, contextValue })) as {
      data?: Record<string, InvoiceDocument | null> | null;
      errors?: readonly GraphQLError[];
    };
    if (result.errors?.length) return failure(result.errors[0], deps);
    const document = Object.values(result.data ?? {})[0];
    return document ? { document, token, context: contextValue as Context } : NOT_FOUND;
  } catch (error) {
    return failure(error, deps);
  }
}

function failure(error: unknown, deps: Pick<AppDeps, 'log'>): Refusal {
  const code = (error as GraphQLError | undefined)?.extensions?.code;
  // Retry-After and RateLimit-* come from the limiter's state, as on every limited answer (src/app.ts).
  if (code === 'RATE_LIMITED') return { status: 429, title: 'Too many requests', text: 'This invoice was opened too often from your network. Please try again in a minute.' };
  // A token longer than any the service hands out: no invoice has it.
  if (code === 'BAD_USER_INPUT') return NOT_FOUND;
  if (code === 'SERVICE_UNAVAILABLE' || isDatabaseUnavailable(error)) {
    return { status: 503, title: 'Temporarily unavailable', text: 'The invoice cannot be shown right now. Please try again in a moment.', headers: { 'Retry-After': '5' } };
  }
  if (code !== 'INTERNAL_SERVER_ERROR') deps.log.error({ err: error }, 'invoice page failed'); // masked errors were logged already
  return { status: 500, title: 'Something went wrong', text: 'The invoice cannot be shown right now.' };
}
