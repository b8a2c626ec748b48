// GET /forms/{form_id}: the embeddable lead-form page, its data read through Query.publicLeadForm;
// GET /forms/embed.js: the snippet that frames it on another site (src/forms/form-page-embed.ts).
import { randomBytes } from 'node:crypto';
import { parse, validate, type GraphQLError } from 'graphql/index.js';
import type { Plugin, YogaServerInstance } from 'graphql-yoga';
import type { AppDeps } from '../deps.js';
import type { Context, ServerContext } from '../context.js';
import { isDatabaseUnavailable } from '../db/client.js';
import { decodeComponent, hostileParameters } from '../http/hostile-bytes.js';
import { Response } from '../http/response.js';
import { schema } from '../schema.js';
import { contentSecurityPolicy, renderFormPage, renderMessagePage, type PublicForm } from '../forms/form-page.js';
import { EMBED_PATH, embedScriptResponse } from '../forms/form-page-embed.js';

const PAGE_PATH = /^\/forms\/([^/]+)\/?$/;

const QUERY = parse(/* GraphQL */ `
  query PublicLeadFormPage($id: ID!) {
    publicLeadForm(id: $id) {
      id name successMessage honeypotField accentColor showTitle
      fields { key label type required options maxLength autocomplete }
    }
  }
`);

type Page = { status: number; title?: string; text?: string; form?: PublicForm; headers?: Record<string, string> };

function respond(page: Page, request: Request, url: URL): Response {
  const nonce = randomBytes(16).toString('base64');
  const html = page.form
    ? renderFormPage(page.form, nonce, url.searchParams)
    : renderMessagePage(page.title ?? 'Error', page.text ?? '', nonce, url.searchParams);
  return new Response(request.method === 'HEAD' ? null : html, {
    status: page.status,
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': contentSecurityPolicy(nonce, Boolean(page.form)),
      'Referrer-Policy': 'strict-origin-when-cross-origin',
      // The nonce is new on every answer, so no cache may keep the page.
      'Cache-Control': 'no-store',
      ...page.headers,
    },
  });
}

const NOT_FOUND: Page = { status: 404, title: 'Form not found', text: 'This form does not exist or is no longer accepting submissions.' };

/** Serves the page inside Yoga (like /api/v1), so the query runs with the same context and masking. */
export function useFormPage(deps: Pick<AppDeps, 'log'>): Plugin<Context> {
  const problems = validate(schema, QUERY);
  if (problems.length > 0) throw new Error(`form page query is invalid: ${problems.map((e) => e.message).join('; ')}`);
  let yoga: YogaServerInstance<ServerContext, Context>;
  return {
    onYogaInit: ({ yoga: instance }) => {
      yoga = instance as unknown as YogaServerInstance<ServerContext, Context>;
    },
    onRequest: async ({ request, url, serverContext, endResponse }) => {
      if (url.pathname === EMBED_PATH && (request.method === 'GET' || request.method === 'HEAD')) {
        endResponse(embedScriptResponse(request));
        return;
      }
      const match = PAGE_PATH.exec(url.pathname);
      if (!match) return;
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        endResponse(respond({ status: 405, title: 'Method not allowed', text: 'This page can only be read.', headers: { Allow: 'GET, HEAD' } }, request, url));
        return;
      }
      const page = await load(yoga, deps, match[1]!, request, serverContext as ServerContext);
      endResponse(respond(page.form ? (hostileLink(page.form, url) ?? page) : page, request, url));
    },
  };
}

/**
 * The 400 of a form's link whose query gives hostile bytes (a NUL, a bad escape, not UTF-8) to a
 * parameter the page reads: `theme`, or a field's key (its prefilled value). After the form's 404,
 * as a submission's 400 comes after its form's (docs/decisions.md §2); other parameters stay ignored.
 */
function hostileLink(form: PublicForm, url: URL): Page | null {
  const hostile = hostileParameters(url.search, new Set(['theme', ...form.fields.map((field) => field.key)]));
  if (hostile.length === 0) return null;
  return { status: 400, title: 'Invalid link', text: `This link's ${hostile.join(', ')} is not valid text. Please open the form from its original link.` };
}

async function load(
  yoga: YogaServerInstance<ServerContext, Context>,
  deps: Pick<AppDeps, 'log'>,
  rawId: string,
  request: Request,
  serverContext: ServerContext,
): Promise<Page> {
  // A path that does not decode, or with hostile bytes (a NUL, not UTF-8): no form has that id.
  const id = decodeComponent(rawId);
  if (id === null) return NOT_FOUND;
  try {
    const enveloped = yoga.getEnveloped({ request, ...serverContext } as never);
    const contextValue = await enveloped.contextFactory();
    const result = (await enveloped.execute({ schema, document: QUERY, variableValues: { id }, contextValue })) as {
      data?: { publicLeadForm: PublicForm | null } | null;
      errors?: readonly GraphQLError[];
    };
    if (result.errors?.length) return failure(result.errors[0], deps);
    return result.data?.publicLeadForm ? { status: 200, form: result.data.publicLeadForm } : NOT_FOUND;
  } catch (error) {
    return failure(error, deps);
  }
}

function failure(error: unknown, deps: Pick<AppDeps, 'log'>): Page {
  const code = (error as GraphQLError | undefined)?.extensions?.code;
  if (code === 'SERVICE_UNAVAILABLE' || isDatabaseUnavailable(error)) {
    return { status: 503, title: 'Temporarily unavailable', text: 'The form cannot be shown right now. Please try again in a moment.', headers: { 'Retry-After': '5' } };
  }
  if (code !== 'INTERNAL_SERVER_ERROR') deps.log.error({ err: error }, 'form page failed'); // masked errors were logged already
  return { status: 500, title: 'Something went wrong', text: 'The form cannot be shown right now.' };
}
