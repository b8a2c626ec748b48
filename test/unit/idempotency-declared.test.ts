import SchemaBuilder from '@pothos/core';
import { describe, expect, it } from 'vitest';
import '../../src/graphql/rules.plugin.js';
import { rulesOf } from '../../src/graphql/rules.js';
import { buildOpenApi } from '../../src/rest/openapi.js';
import { routes } from '../../src/rest/routes.js';
import { schema } from '../../src/schema.js';

// docs/decisions.md §4: every mutation honours Idempotency-Key, or says in its rules why it cannot;
// the reason is part of its description, so GraphiQL, codegen and the OpenAPI document show it.
describe('Idempotency-Key is declared on every mutation', () => {
  const mutations = Object.values(schema.getMutationType()!.getFields());

  it.each(mutations.map((field) => [field.name, field] as const))('Mutation.%s honours it, or its description says why not', (_name, field) => {
    const rules = rulesOf(field)!;
    expect(Boolean(rules.idempotent) !== Boolean(rules.notIdempotent)).toBe(true);
    if (rules.notIdempotent) expect(field.description).toContain(`Idempotency-Key: not honoured: ${rules.notIdempotent}.`);
    else expect(field.description ?? '').not.toContain('not honoured');
  });

  it('every REST write lists the Idempotency-Key header, and none says it is not honoured (POST /api/v1/imports through queueImport)', () => {
    const doc = buildOpenApi({ cookieName: 'session', serverUrl: 'http://127.0.0.1' }) as { paths: Record<string, Record<string, { description?: string; parameters?: { name: string }[] }>> };
    // A POST that runs a query (a workflow's dry run, docs/workflows.md) writes nothing: no key to take.
    const reads = new Set(routes.filter((r) => r.operation.definitions.some((d) => d.kind === 'OperationDefinition' && d.operation === 'query'))
      .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, '{$1}')}`));
    expect(reads).toContain('post /api/v1/workflows/{id}/test');
    const writes: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        if (method === 'get' || reads.has(`${method} ${path}`)) continue;
        writes.push(`${method.toUpperCase()} ${path}`);
        expect((op.parameters ?? []).some((p) => p.name === 'Idempotency-Key'), `${method} ${path}`).toBe(true);
        expect(op.description ?? '', `${method} ${path}`).not.toContain('not honoured');
      }
    }
    expect(writes).toContain('POST /api/v1/imports');
  });

  it('a mutation that says neither fails the build, not a request', () => {
    // The Prisma plugin's options are required by its typings, not by a builder without it.
    const bare = new SchemaBuilder<{ Context: object }>({ plugins: ['rules'] } as never);
    bare.queryType({ fields: (t) => ({ ok: t.boolean({ rules: { access: 'user' }, resolve: () => true }) }) });
    bare.mutationType({ fields: (t) => ({ forgetful: t.boolean({ rules: { access: 'user' }, resolve: () => true }) }) });
    expect(() => bare.toSchema()).toThrow('Mutation.forgetful declares neither or both of idempotent and notIdempotent');
  });
});
