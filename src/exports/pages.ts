// What both exports (the contacts CSV and the account document) stand on: records read a keyset page
// at a time, each page one JSON text that PostgreSQL builds, and the web stream that hands their
// text to the client only as fast as it reads.
import { ReadableStream } from 'node:stream/web';
import type pg from 'pg';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { poolQuery } from '../db/raw.js';
import { ident } from '../graphql/collection.js';

/**
 * Where an export reads. Pages go through the pool's own `pg` client when there is one: what a
 * Prisma query answers outlives young-generation GCs, so a million records read through Prisma
 * pile up in old space as garbage (BENCHMARKS.md "CSV memory"); `pg`'s answers die young.
 * PGlite has no pool: Prisma's raw query there. The REST downloads pass the reader's replica.
 */
export type ExportSource = { db: PrismaClient; pool: pg.Pool | null };

export function query<T>(source: ExportSource, sql: Prisma.Sql): Promise<T[]> {
  return source.pool ? poolQuery<T>(source.pool, sql) : source.db.$queryRaw<T[]>(sql);
}

/** A column of the unique key the pages follow; `udt` is the type its value is cast back to. */
export type KeyColumn = { name: string; udt: string };

export type Pages = {
  table: string;
  filter: Prisma.Sql;
  /** A unique key: the records come out in its order, and each page starts after the last one's. */
  keys: readonly KeyColumn[];
  /** What a record is read as: a list of expressions, one JSON array per record. */
  values: Prisma.Sql;
  pageSize: number;
  /** When set, a page after the first holds about this many characters of JSON, `pageSize` records at most. */
  pageChars?: number;
};

/**
 * The records, one page (a list of the records' value arrays) per query, never all at once; each
 * page starts its index scan after the last row's key, as PostgreSQL wrote it (JSON text: exact for
 * any column type and whatever the session's TimeZone), so a million records cost no more per page
 * than ten. The page size is the statement's last parameter (the tests count pages by it).
 */
export async function* keysetPages(source: ExportSource, pages: Pages): AsyncGenerator<unknown[][]> {
  const order = Prisma.join(pages.keys.map((k) => ident(k.name)));
  const backwards = Prisma.join(pages.keys.map((k) => Prisma.sql`${ident(k.name)} DESC`));
  let after: unknown[] | undefined;
  let limit = pages.pageSize;
  for (;;) {
    const since = after
      ? Prisma.sql`AND (${order}) > (${Prisma.join(pages.keys.map((k, i) => Prisma.sql`${after![i]}::${ident(k.udt)}`))})`
      : Prisma.empty;
    const [answer] = await query<{ page: string | null; last: string | null }>(source, Prisma.sql`
      SELECT json_agg(json_build_array(${pages.values}) ORDER BY ${order})::text AS page,
             (array_agg(json_build_array(${order}) ORDER BY ${backwards}))[1]::text AS last
      FROM (SELECT * FROM ${ident(pages.table)} WHERE ${pages.filter} ${since} ORDER BY ${order} LIMIT ${limit}) AS page_rows`);
    const rows: unknown[][] = answer?.page ? JSON.parse(answer.page) : [];
    if (rows.length > 0) yield rows;
    if (rows.length < limit) return;
    after = JSON.parse(answer!.last!) as unknown[];
    if (pages.pageChars) limit = Math.max(1, Math.min(pages.pageSize, Math.floor((pages.pageChars * rows.length) / answer!.page!.length)));
  }
}

/**
 * `parts` as a web stream of UTF-8 bytes, for `new Response(...)`, in chunks of about `chunkChars`
 * (not a write each). `ReadableStream.from` asks for a chunk only when the client asks for bytes
 * (its highWaterMark is 0: nothing is read ahead of the socket), so memory holds about one page
 * whatever the size; cancelling returns the generators, which stops `parts`' queries.
 */
export function textStream(parts: AsyncIterable<string>, chunkChars: number): globalThis.ReadableStream<Uint8Array> {
  // node:stream/web's type declares `from`; the stream is the global one `Response` takes.
  return ReadableStream.from(chunksOf(parts, chunkChars)) as globalThis.ReadableStream<Uint8Array>;
}

async function* chunksOf(parts: AsyncIterable<string>, chunkChars: number): AsyncGenerator<Uint8Array> {
  const encoder = new TextEncoder();
  let text = '';
  for await (const part of parts) {
    text += part;
    if (text.length < chunkChars) continue;
    yield encoder.encode(text);
    text = '';
  }
  if (text) yield encoder.encode(text);
}
