import fc from 'fast-check';

/**
 * fast-check arbitraries from JSON Schema (2020-12, the dialect of OpenAPI 3.1): values a schema
 * accepts, and values it refuses. Written here rather than taken from npm: the only package of that
 * kind, json-schema-fast-check (0.0.6), is built on fast-check 1 and faker 4, both long abandoned,
 * and json-schema-faker has a randomness of its own, so a failure would neither shrink nor replay
 * from FUZZ_SEED. This covers what the service's document uses: type (one or a list, `null`
 * included), enum, const, format (uuid, date-time, date, email), pattern, min/maxLength,
 * minimum/maximum (exclusive too), required, additionalProperties, anyOf/oneOf, $ref to
 * `#/components/...`, arrays with min/maxItems, and the rules across an object's properties the
 * service's document states: `oneOf` variants that add requirements (one of two keys), `not` (not
 * both), `allOf` of `if`/`then` on a property's `const` (a key only with one `mode`).
 */
export type Schema = { [keyword: string]: any };

/** A value to use for a property or parameter of this name instead of a generated one (ids of real records). */
export type Hint = (name: string, schema: Schema) => fc.Arbitrary<unknown> | undefined;

export type Generator = {
  /** Values `schema` accepts; `name` is the property or parameter they fill (for hints). */
  valid(schema: Schema, name?: string): fc.Arbitrary<unknown>;
  /** Values `schema` refuses, as far as the schema refuses anything ({} accepts every value). */
  invalid(schema: Schema, name?: string): fc.Arbitrary<unknown>;
  /** The schema a `$ref` names, followed until it is no reference. */
  resolve(schema: Schema): Schema;
};

const STRING_CAP = 24;
const ARRAY_CAP = 3;
const NUMBER_CAP = 1e6;

const typesOf = (schema: Schema): string[] | undefined =>
  schema.type === undefined ? undefined : Array.isArray(schema.type) ? schema.type : [schema.type];

/** Short text: mostly ASCII, sometimes any Unicode (astral planes, combining marks). */
const text = (minLength: number, maxLength: number) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.string({ minLength, maxLength }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength, maxLength }) },
  );

const word = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'), minLength: 1, maxLength: 10 });
const email = fc.tuple(word, word).map(([local, domain]) => `${local}@${domain}.example`);
const dateTime = fc
  .date({ min: new Date('1990-01-01T00:00:00.000Z'), max: new Date('2060-12-31T23:59:59.999Z'), noInvalidDate: true })
  .map((d) => d.toISOString());

/** A generator over `doc` (for its `$ref`s), filling named values through `hint` first. */
export function jsonSchemaArbitraries(doc: object, hint: Hint = () => undefined): Generator {
  const resolve = (schema: Schema): Schema => {
    let current = schema;
    for (let i = 0; current && typeof current.$ref === 'string' && i < 20; i++) {
      const { $ref, ...rest } = current;
      const target = ($ref as string)
        .replace(/^#\//, '')
        .split('/')
        .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
        .reduce<any>((node, key) => node?.[key], doc);
      if (!target) throw new Error(`unresolved ${$ref}`);
      current = { ...target, ...rest };
    }
    return current;
  };

  function stringOf(schema: Schema): fc.Arbitrary<string> {
    const min = schema.minLength ?? 0;
    const max = Math.max(min, Math.min(schema.maxLength ?? STRING_CAP, min + STRING_CAP));
    const fits = (s: string) => s.length >= min && s.length <= (schema.maxLength ?? Infinity);
    switch (schema.format) {
      case 'uuid':
        return fc.uuid({ version: [4, 7] });
      case 'date-time':
        return dateTime;
      case 'date':
        return dateTime.map((s) => s.slice(0, 10));
      case 'email':
        return email.filter(fits);
    }
    if (typeof schema.pattern === 'string') {
      // `\S`: anything with a visible character (a trimmed, non-blank string).
      if (schema.pattern === '\\S') return fc.tuple(text(0, 3), word, text(0, max)).map(([a, b, c]) => `${a}${b}${c}`.slice(0, Math.max(max, 1))).filter((s) => /\S/.test(s));
      return fc.stringMatching(new RegExp(schema.pattern)).filter(fits);
    }
    return text(min, max);
  }

  function numberOf(schema: Schema, integer: boolean): fc.Arbitrary<number> {
    let min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum : -NUMBER_CAP);
    let max = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum : NUMBER_CAP);
    if (integer) {
      min = Math.ceil(schema.exclusiveMinimum !== undefined && schema.minimum === undefined ? min + 1 : min);
      max = Math.floor(schema.exclusiveMaximum !== undefined && schema.maximum === undefined ? max - 1 : max);
      const lo = Math.max(min, -(2 ** 31)), hi = Math.min(max, 2 ** 31 - 1);
      return fc.oneof({ weight: 3, arbitrary: fc.integer({ min: lo, max: Math.min(hi, Math.max(lo, 0) + 100) }) }, { weight: 1, arbitrary: fc.integer({ min: lo, max: hi }) }, fc.constantFrom(lo, hi));
    }
    const places = typeof schema['x-decimal-places'] === 'number' ? schema['x-decimal-places'] : 2;
    const scale = 10 ** places;
    const lo = Math.ceil(Math.max(min, -NUMBER_CAP) * scale), hi = Math.floor(Math.min(max, NUMBER_CAP) * scale);
    const open = (n: number) => (schema.exclusiveMinimum === undefined || n > schema.exclusiveMinimum) && (schema.exclusiveMaximum === undefined || n < schema.exclusiveMaximum);
    return fc
      .oneof(
        { weight: 3, arbitrary: fc.integer({ min: lo, max: Math.min(hi, Math.max(lo, 0) + 100 * scale) }) },
        { weight: 1, arbitrary: fc.integer({ min: lo, max: hi }) },
        fc.constantFrom(lo, hi),
      )
      .map((n) => n / scale)
      .filter(open);
  }

  function objectOf(schema: Schema): fc.Arbitrary<Record<string, unknown>> {
    const properties: Record<string, Schema> = schema.properties ?? {};
    const required: string[] = schema.required ?? [];
    const model = Object.fromEntries(Object.entries(properties).map(([key, s]) => [key, valid(s, key)]));
    const record = fc.record(model, { requiredKeys: required.filter((k) => k in model) }) as fc.Arbitrary<Record<string, unknown>>;
    // At least `minProperties` keys (a PATCH changes something).
    const known = schema.minProperties ? record.filter((o) => Object.keys(o).length >= schema.minProperties) : record;
    const extra = schema.additionalProperties;
    if (extra === undefined || extra === false || extra === true || Object.keys(properties).length > 0) return known;
    // A map: a few entries (a hint on the property names its keys where they matter, as a form's fields).
    return fc.dictionary(word, valid(extra as Schema), { maxKeys: 4 });
  }

  function valid(input: Schema, name?: string): fc.Arbitrary<unknown> {
    const schema = resolve(input);
    const hinted = name ? hint(name, schema) : undefined;
    if (hinted) return hinted;
    if ('const' in schema) return fc.constant(schema.const);
    // Given, not null: the schema's values less null.
    if (schema.not && schema.not.type === 'null' && Object.keys(schema.not).length === 1) {
      const { not: _not, ...rest } = schema;
      return valid(rest, name).filter((v) => v !== null);
    }
    if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
    const variants = schema.oneOf ?? schema.anyOf;
    if (Array.isArray(variants)) {
      const { oneOf: _o, anyOf: _a, ...base } = schema;
      // Variants of an object that only add requirements (an invoice's `amount` or `lines`): the object with
      // one variant's, without what only the others require (else it would match those too).
      if (base.properties) {
        return fc.oneof(
          ...variants.map((v: Schema, i: number) => {
            const others = variants.filter((_: Schema, j: number) => j !== i).flatMap((o: Schema) => (resolve(o).required ?? []) as string[]);
            const own: string[] = resolve(v).required ?? [];
            const drop = others.filter((key) => !own.includes(key));
            // A key the variant requires takes the variant's own schema of it too (`not: {type: 'null'}`: given, not null).
            const variant = (resolve(v).properties ?? {}) as Record<string, Schema>;
            const properties = Object.fromEntries(
              Object.entries(base.properties as Record<string, Schema>).filter(([key]) => !drop.includes(key)).map(([key, s]) => [key, key in variant ? { ...resolve(s), ...variant[key] } : s]),
            );
            return valid({ ...base, properties, required: [...new Set([...(base.required ?? []), ...own])] }, name);
          }),
        );
      }
      return fc.oneof(...variants.map((v: Schema) => valid({ ...base, ...resolve(v) }, name)));
    }
    // Rules across an object's properties (`not` both of two, `if` one value `then` another required): values
    // of the object alone, made to keep them.
    if (schema.properties && (schema.not || Array.isArray(schema.allOf))) {
      const { not, allOf, ...base } = schema;
      return valid(base, name).chain((value) => keeping(base, value as Record<string, unknown>, not, (allOf ?? []) as Schema[]));
    }
    const types = typesOf(schema) ?? (schema.properties ? ['object'] : undefined);
    if (!types) return fc.jsonValue({ maxDepth: 2 });
    const nonNull = types.filter((t) => t !== 'null');
    const arbitraries = nonNull.map((type): fc.Arbitrary<unknown> => {
      switch (type) {
        case 'string':
          return stringOf(schema);
        case 'integer':
          return numberOf(schema, true);
        case 'number':
          return numberOf(schema, false);
        case 'boolean':
          return fc.boolean();
        case 'array': {
          const minLength = schema.minItems ?? 0;
          const maxLength = Math.max(minLength, Math.min(schema.maxItems ?? ARRAY_CAP, minLength + ARRAY_CAP));
          return fc.array(valid(schema.items ?? {}, name && `${name}[]`), { minLength, maxLength });
        }
        case 'object':
          return objectOf(schema);
        default:
          throw new Error(`JSON Schema type ${type} is not generated`);
      }
    });
    if (types.includes('null')) arbitraries.push(fc.constant(null));
    return arbitraries.length === 1 ? arbitraries[0]! : fc.oneof(...arbitraries);
  }

  /** Whether `value` matches `schema`, as far as the rules across properties need (const, null, required, properties, not, anyOf). */
  function matches(input: Schema | boolean, value: unknown): boolean {
    if (typeof input === 'boolean') return input;
    const schema = resolve(input);
    if ('const' in schema && JSON.stringify(schema.const) !== JSON.stringify(value)) return false;
    if (schema.type === 'null' && value !== null) return false;
    if (schema.not && matches(schema.not, value)) return false;
    if (Array.isArray(schema.anyOf) && !schema.anyOf.some((s: Schema) => matches(s, value))) return false;
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const object = value as Record<string, unknown>;
      if ((schema.required ?? []).some((key: string) => !(key in object))) return false;
      for (const [key, s] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) if (key in object && !matches(s, object[key])) return false;
    }
    return true;
  }

  /** The keys a schema requires present (a `not`'s, an `anyOf` branch's). */
  const requiredIn = (schema: Schema): string[][] => (Array.isArray(schema.anyOf) ? schema.anyOf.map((s: Schema) => s.required ?? []) : [schema.required ?? []]);

  /** `value` changed to keep `not` and each `if`/`then` of `rules`: what `then` requires added, what it refuses (and `not`) removed. */
  function keeping(base: Schema, value: Record<string, unknown>, not: Schema | undefined, rules: Schema[]): fc.Arbitrary<unknown> {
    const out = { ...value };
    const add = new Set<string>();
    for (const rule of rules) {
      if (!rule.if || !rule.then || !matches(rule.if, out)) continue;
      for (const key of rule.then.required ?? []) if (!(key in out)) add.add(key);
      if (rule.then.not) for (const keys of requiredIn(rule.then.not)) for (const key of keys) delete out[key];
    }
    if (not && matches(not, out)) delete out[(not.required ?? [])[0]];
    if (add.size === 0) return fc.constant(out);
    const properties = base.properties as Record<string, Schema>;
    return fc.record(Object.fromEntries([...add].map((key) => [key, valid(properties[key] ?? {}, key)]))).map((more) => ({ ...out, ...more }));
  }

  /** A JSON value of none of `types`. */
  const otherType = (types: string[]): fc.Arbitrary<unknown>[] => {
    const all: Record<string, fc.Arbitrary<unknown>> = {
      string: fc.constantFrom('', 'x', '12', 'true', 'null'),
      number: fc.constantFrom(1.5, -1, 0, 1e21),
      integer: fc.constantFrom(7, 0, -3),
      boolean: fc.boolean(),
      null: fc.constant(null),
      object: fc.constantFrom({}, { a: 1 }),
      array: fc.constantFrom([], [1, 'x']),
    };
    const allowed = new Set(types.flatMap((t) => (t === 'number' ? ['number', 'integer'] : [t])));
    return Object.entries(all).filter(([type]) => !allowed.has(type)).map(([, a]) => a);
  };

  function invalid(input: Schema, name?: string): fc.Arbitrary<unknown> {
    const schema = resolve(input);
    const types = typesOf(schema) ?? (schema.properties ? ['object'] : undefined);
    const options: fc.Arbitrary<unknown>[] = [];
    if (types) options.push(...otherType(types));
    if (Array.isArray(schema.enum)) options.push(word.map((w) => `${w}-not-in-enum`), fc.constantFrom(...schema.enum.filter((v: unknown) => typeof v === 'string').map((v: string) => ` ${v.toUpperCase()} `)));
    if (types?.includes('string') && !schema.enum) {
      if (schema.format === 'uuid') options.push(fc.constantFrom('not-a-uuid', '00000000-0000-0000-0000-00000000000g', '123'));
      if (schema.format === 'date-time') options.push(fc.constantFrom('2024-02-30T00:00:00Z', 'yesterday', '2024-01-01', '12026-01-01T00:00:00.000Z', '2024-01-01T25:00:00Z'));
      if (schema.format === 'date') options.push(fc.constantFrom('2024-02-30', '2024-1-1', '31/01/2024', '0000-00-00'));
      if (schema.format === 'email') options.push(fc.constantFrom('not-an-email', '@', 'a@', 'a b@c.d'));
      if (typeof schema.maxLength === 'number') options.push(fc.constant('x'.repeat(schema.maxLength + 1)));
      if (typeof schema.minLength === 'number' && schema.minLength > 0) options.push(fc.constant(''));
      if (schema.pattern === '\\S') options.push(fc.constantFrom('', '   ', '\t\n'));
      if (schema['x-trimmed'] && typeof schema.description === 'string') {
        const most = /at most ([\d,]+) characters/.exec(schema.description)?.[1];
        if (most) options.push(fc.constant('y'.repeat(Number(most.replace(/,/g, '')) + 1)));
      }
      options.push(fc.constantFrom('a\u0000b', '\ud800'));
    }
    if (types?.some((t) => t === 'number' || t === 'integer')) {
      if (typeof schema.minimum === 'number') options.push(fc.constant(schema.minimum - 1));
      if (typeof schema.exclusiveMinimum === 'number') options.push(fc.constant(schema.exclusiveMinimum));
      if (typeof schema.maximum === 'number') options.push(fc.constant(schema.maximum + 1));
      if (types.includes('integer') && !types.includes('number')) options.push(fc.constantFrom(1.5, 2 ** 31));
    }
    if (types?.includes('array')) {
      if (typeof schema.maxItems === 'number') options.push(fc.array(valid(schema.items ?? {}), { minLength: schema.maxItems + 1, maxLength: schema.maxItems + 1 }));
      if (typeof schema.minItems === 'number' && schema.minItems > 0) options.push(fc.constant([]));
      if (schema.items) options.push(fc.tuple(invalid(schema.items)).map(([item]) => [item]));
    }
    // The rules across properties broken: both of a `oneOf`'s or a `not`'s keys, none of a `oneOf`'s, an `if` without its `then`.
    if (schema.properties && (schema.oneOf || schema.not || schema.allOf)) {
      const properties = schema.properties as Record<string, Schema>;
      const { oneOf, not, allOf, ...base } = schema;
      const plain = valid(base) as fc.Arbitrary<Record<string, unknown>>;
      const withKeys = (keys: string[]) =>
        plain.chain((o) => fc.record(Object.fromEntries(keys.map((key) => [key, valid(properties[key] ?? {}, key).filter((v) => v !== null)]))).map((more) => ({ ...o, ...more })));
      if (Array.isArray(oneOf)) {
        const keys = [...new Set(oneOf.flatMap((v: Schema) => (resolve(v).required ?? []) as string[]))];
        options.push(withKeys(keys), plain.map((o) => Object.fromEntries(Object.entries(o).filter(([key]) => !keys.includes(key)))));
      }
      if (not?.required) options.push(withKeys(not.required));
      for (const rule of (allOf ?? []) as Schema[]) {
        const choice = Object.entries((rule.if?.properties ?? {}) as Record<string, Schema>).filter(([, s]) => 'const' in s);
        if (!rule.then || choice.length === 0) continue;
        const chosen = Object.fromEntries(choice.map(([key, s]) => [key, s.const]));
        const then: string[] = rule.then.required ?? [];
        if (then.length) options.push(plain.map((o) => ({ ...Object.fromEntries(Object.entries(o).filter(([key]) => !then.includes(key))), ...chosen })));
        if (rule.then.not) for (const keys of requiredIn(rule.then.not)) options.push(withKeys(keys).map((o) => ({ ...o, ...chosen })));
      }
    }
    if (types?.includes('object') && schema.properties) {
      const base = objectOf(schema);
      const required: string[] = schema.required ?? [];
      if (required.length) options.push(fc.tuple(base, fc.constantFrom(...required)).map(([o, key]) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== key))));
      if (schema.additionalProperties === false) options.push(fc.tuple(base, fc.constantFrom('unknown_field', '__proto__', 'id', 'created_at', 'accountId')).map(([o, key]) => ({ ...o, [key]: 1 })));
      const keys = Object.keys(schema.properties);
      if (keys.length) {
        options.push(
          fc.tuple(base, fc.constantFrom(...keys)).chain(([o, key]) => invalid(schema.properties[key], key).map((bad) => ({ ...o, [key]: bad }))),
        );
      }
    }
    if (options.length === 0) return valid(schema, name); // nothing is refused by this schema
    return fc.oneof(...options);
  }

  return { valid, invalid, resolve };
}
