import { z } from 'zod';
import { DOCS_PATH, OPENAPI_PATH } from '../../src/rest/docs.js';

// Every /api/v1 answer a test receives is checked against the app's own OpenAPI document, so the
// document cannot drift from what the service really says.

export type Answer = { status: number; headers: Headers; body: unknown; text: string };

type Response = { headers?: Record<string, unknown>; content?: Record<string, { schema?: object }> };
type Operation = { responses: Record<string, Response> };
type Doc = {
  paths: Record<string, Record<string, Operation>>;
  components: { responses: Record<string, Response>; headers?: Record<string, Header>; schemas?: Record<string, object> };
};

type Compiled = { headers: string[]; content: Map<string, z.ZodType | null> };

type Header = { $ref?: string; required?: boolean };

/** `schema` with each `#/components/schemas/...` reference replaced by what it names (zod reads no references). */
export function inline(schema: unknown, schemas: Record<string, object>): unknown {
  if (Array.isArray(schema)) return schema.map((s) => inline(s, schemas));
  if (schema === null || typeof schema !== 'object') return schema;
  const { $ref, ...rest } = schema as { $ref?: string };
  const named = typeof $ref === 'string' ? inline(schemas[$ref.replace('#/components/schemas/', '')], schemas) as object : {};
  return { ...named, ...Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, inline(v, schemas)])) };
}

// Headers a response declares `required` must be on every such answer; optional ones may be absent.
const compileResponse = (response: Response, components: Record<string, Header>, schemas: Record<string, object> = {}): Compiled => ({
  headers: Object.entries((response.headers ?? {}) as Record<string, Header>)
    .filter(([, h]) => (h.$ref ? components[h.$ref.split('/').pop()!]?.required : h.required) === true)
    .map(([name]) => name),
  content: new Map(
    Object.entries(response.content ?? {}).map(([type, media]) => [type, media.schema ? z.fromJSONSchema(inline(media.schema, schemas) as never) : null]),
  ),
});

const segmentsOf = (pathname: string) => pathname.replace(/\/+$/, '').split('/');

/** True when `part` fills a path parameter as the router reads it: it decodes, and is not empty. */
function fillsParameter(part: string): boolean {
  try {
    return decodeURIComponent(part) !== '';
  } catch {
    return false;
  }
}

/** Compiles every response schema of the document once; the checker then runs per answer. */
export function openApiChecker(doc: Doc) {
  const headerComponents = doc.components.headers ?? {};
  const paths = Object.entries(doc.paths).map(([template, operations]) => ({
    template,
    segments: segmentsOf(template),
    operations: Object.fromEntries(
      Object.entries(operations).map(([method, op]) => [
        method.toUpperCase(),
        Object.fromEntries(Object.entries(op.responses).map(([status, r]) => [status, compileResponse(r, headerComponents, doc.components.schemas)])),
      ]),
    ),
  }));
  const notFound = compileResponse(doc.components.responses.RouteNotFound!, headerComponents);
  const notAllowed = compileResponse(doc.components.responses.MethodNotAllowed!, headerComponents);

  /** What the document says of `answer`, or why it says nothing. */
  function describedBy(method: string, pathname: string, status: number): { name: string; response?: Compiled; problem?: string } {
    const parts = segmentsOf(pathname);
    const path = paths.find(
      (p) => p.segments.length === parts.length && p.segments.every((s, i) => (s.startsWith('{') ? fillsParameter(parts[i]!) : s === parts[i])),
    );
    const operation = path?.operations[method];
    if (path && operation) {
      const name = `${method} ${path.template}`;
      const response = operation[String(status)];
      return response ? { name, response } : { name, problem: `the document describes no ${status} answer` };
    }
    const name = `${method} ${pathname}`;
    // The reference itself (the document and Swagger UI) is served beside the API, not described in it.
    const reference = pathname === OPENAPI_PATH || pathname === DOCS_PATH || pathname.startsWith(`${DOCS_PATH}/`);
    if (reference && status < 400) return { name };
    if (status === 404) return { name, response: notFound };
    if (status === 405) return { name, response: notAllowed };
    return { name, problem: `no operation is described, so only 404 or 405 may answer, not ${status}` };
  }

  /** Every way `answer` departs from the document; empty when it matches. */
  function problems(method: string, pathname: string, answer: Answer): string[] {
    const { name, response, problem } = describedBy(method.toUpperCase(), pathname, answer.status);
    const found: string[] = [];
    if (problem) found.push(`${name}: ${problem}`);
    if (!response) return found;
    for (const header of response.headers) {
      if (answer.headers.get(header) === null) found.push(`${name} ${answer.status}: header ${header} is missing`);
    }
    // A response described without content (204) matches an empty body.
    if (response.content.size === 0) {
      if (answer.text !== '') found.push(`${name} ${answer.status}: a body where the document describes none`);
      return found;
    }
    const type = (answer.headers.get('content-type') ?? '').split(';')[0]!.trim();
    if (!response.content.has(type)) {
      found.push(`${name} ${answer.status}: content type "${type}" is not described (only ${[...response.content.keys()].join(', ')})`);
      return found;
    }
    const schema = response.content.get(type);
    const result = schema?.safeParse(type.endsWith('json') ? answer.body : answer.text);
    for (const issue of result?.error?.issues ?? []) {
      found.push(`${name} ${answer.status}: at ${issue.path.join('.') || 'the top'}: ${issue.message}`);
    }
    return found;
  }

  return {
    problems,
    /** Throws, naming each departure and the body, unless `answer` matches the document. */
    check(method: string, pathname: string, answer: Answer) {
      const found = problems(method, pathname, answer);
      if (found.length === 0) return;
      const body = answer.text.length > 500 ? `${answer.text.slice(0, 500)}…` : answer.text;
      throw new Error(`The answer does not match the OpenAPI document:\n  ${found.join('\n  ')}\nbody: ${body}`);
    },
  };
}

export type OpenApiChecker = ReturnType<typeof openApiChecker>;

export const isApiPath = (pathname: string) => pathname === '/api/v1' || pathname.startsWith('/api/v1/');
