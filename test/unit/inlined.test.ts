import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Prisma } from '../../src/generated/prisma/client.js';
import { inlined } from '../../src/db/raw.js';

// A statement sent with BEGIN in one simple query carries its values as literals (src/db/raw.ts
// `inlined`, rawTransaction's `read`): whatever a value holds, the database must read it back as given.

const escape = (text: string) => pg.Client.prototype.escapeLiteral.call(null, text);

describe('inlined: parameters written as literals', () => {
  let db: PGlite;
  beforeAll(async () => void (db = await PGlite.create()));
  afterAll(() => db?.close());

  it('text with quotes, backslashes, a placeholder of its own and non-Latin letters, numbers, booleans and null are read back as given', async () => {
    const values = ["o'neil\\+x \"y\" $1 ; DROP TABLE t; --", 'Ἀλέξανδρος 山田', 42, -1.5, true, null] as const;
    const sql = Prisma.sql`SELECT ${values[0]}::text AS a, ${values[1]}::text AS b, ${values[2]}::int AS c, ${values[3]}::float8 AS d, ${values[4]}::boolean AS e, ${values[5]}::text AS f`;
    const [row] = (await db.query(inlined(sql, escape))).rows;
    expect(row).toEqual({ a: values[0], b: values[1], c: 42, d: -1.5, e: true, f: null });
  });

  it('a value that is not text, a number, a boolean or null is refused, never guessed at', () => {
    expect(() => inlined(Prisma.sql`SELECT ${new Date(0)}::timestamptz`, escape)).toThrow(/parameter \$1 is a object/);
    expect(() => inlined(Prisma.sql`SELECT ${Number.NaN}::float8`, escape)).toThrow(/parameter \$1/);
  });
});
