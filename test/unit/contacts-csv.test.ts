import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contactsCsvStream, csvCell, CSV_CHUNK_CHARS, CSV_CHUNK_SIZE } from '../../src/exports/contacts-csv.js';
import type { Prisma, PrismaClient } from '../../src/generated/prisma/client.js';
import { createAccount, createContact } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { parseCsv } from '../helpers/csv.js';

const HEADER = 'First Name,Last Name,Email,Phone,Company,Contact Type,Source,Created At,External Id';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const csvOf = (db: PrismaClient, accountId: string) => new Response(contactsCsvStream(db, accountId)).text();

/** A db whose page queries are counted, with the page size each asked for, to see how the stream reads. */
function countingDb(takes: number[]): PrismaClient {
  return {
    $queryRaw: (query: Prisma.Sql) => {
      takes.push(query.values.at(-1) as number); // the page size is the statement's last parameter
      return t.db.$queryRaw(query);
    },
    // The account's field definitions (its CSV columns) are read as every request reads them, cached: not a page.
    customField: t.db.customField,
  } as unknown as PrismaClient;
}

describe('csvCell', () => {
  it.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['cr\ronly', '"cr\ronly"'],
    ['Zoë Ångström 日本', 'Zoë Ångström 日本'],
    ['', ''],
  ])('%j is written as %j (RFC 4180 quoting)', (value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });

  it.each([
    ['=SUM(A1:A2)', "'=SUM(A1:A2)"],
    ['+1 555 0100', "'+1 555 0100"],
    ['-2+3', "'-2+3"],
    ['@cmd', "'@cmd"],
    ['\tindent', "'\tindent"],
    ['\rreturn', `"'\rreturn"`],
    ['=HYPERLINK("x")', `"'=HYPERLINK(""x"")"`],
    ['a=b', 'a=b'],
    ['x;=1+1', `"x;'=1+1"`],
    ['a;b', '"a;b"'],
    ['=a;-b', `"'=a;'-b"`],
  ])('a cell beginning %j, or a part of it after a ";", gets a leading quote (formula injection): %j', (value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });
});

describe('contactsCsvStream', () => {
  it('the header row is exact, and an account without contacts gets only the header', async () => {
    const acc = await createAccount(t);
    expect(await csvOf(t.db, acc.id)).toBe(`${HEADER}\r\n`);
  });

  it('writes every column, nulls as empty cells, created at in ISO 8601 UTC', async () => {
    const acc = await createAccount(t);
    const createdAt = new Date('2024-02-29T23:59:58.123Z');
    await createContact(t, acc, {
      firstName: 'Ada',
      lastName: null,
      email: null,
      phone: null,
      company: null,
      contactType: 'past_client',
      source: 'cold_outreach',
      createdAt,
    });
    const text = await csvOf(t.db, acc.id);
    expect(text).toBe(`${HEADER}\r\nAda,,,,,past_client,cold_outreach,2024-02-29T23:59:58.123Z,\r\n`);
  });

  it('quotes commas, quotes and line breaks, keeps UTF-8, and guards formulas, read back cell for cell', async () => {
    const acc = await createAccount(t);
    await createContact(t, acc, {
      firstName: 'Zoë "Z"',
      lastName: 'Ångström, Jr.',
      email: '=cmd|calc@example.com',
      phone: '+1 555 0100',
      company: 'Line one\nLine two',
      createdAt: new Date('2024-01-01T00:00:00.000Z'),
    });
    await createContact(t, acc, {
      firstName: '-10',
      lastName: '@handle',
      email: null,
      phone: '\t555',
      company: '日本語',
      createdAt: new Date('2024-01-02T00:00:00.000Z'),
    });
    const bytes = new Uint8Array(await new Response(contactsCsvStream(t.db, acc.id)).arrayBuffer());
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    expect(bytes[0]).toBe('F'.charCodeAt(0)); // no BOM
    expect(parseCsv(text)).toEqual([
      HEADER.split(','),
      ['Zoë "Z"', 'Ångström, Jr.', "'=cmd|calc@example.com", "'+1 555 0100", 'Line one\nLine two', 'lead', 'other', '2024-01-01T00:00:00.000Z', ''],
      ["'-10", "'@handle", '', "'\t555", '日本語', 'lead', 'other', '2024-01-02T00:00:00.000Z', ''],
    ]);
  });

  it("holds only the account's own contacts", async () => {
    const [acc, other] = await Promise.all([createAccount(t), createAccount(t)]);
    await createContact(t, acc, { firstName: 'Mine' });
    await createContact(t, other, { firstName: 'Theirs' });
    const rows = parseCsv(await csvOf(t.db, acc.id));
    expect(rows.map((r) => r[0])).toEqual(['First Name', 'Mine']);
  });

  it('streams 2,500 contacts oldest first across chunk boundaries, in pages of at most 1000 rows', async () => {
    const acc = await createAccount(t);
    const base = Date.UTC(2023, 0, 1);
    // Pairs share a created_at, so the order also depends on the id tie-break across pages.
    const data = Array.from({ length: 2500 }, (_, i) => ({
      accountId: acc.id,
      firstName: `n${i}`,
      createdAt: new Date(base + Math.floor(i / 2) * 1000),
    }));
    await t.db.contact.createMany({ data: data.reverse() });
    const expected = await t.db.contact.findMany({
      where: { accountId: acc.id },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      select: { firstName: true },
    });

    const takes: number[] = [];
    const text = await csvOf(countingDb(takes), acc.id);
    expect(text.endsWith('\r\n'), 'CRLF after the last record too').toBe(true);
    const lines = text.slice(0, -2).split('\r\n');
    expect(lines).toHaveLength(2501);
    expect(lines.slice(1).map((line) => line.split(',')[0])).toEqual(expected.map((c) => c.firstName));
    expect(lines[1]!.startsWith('n0,') || lines[1]!.startsWith('n1,')).toBe(true);
    expect(takes).toEqual([CSV_CHUNK_SIZE, CSV_CHUNK_SIZE, CSV_CHUNK_SIZE]);
    expect(CSV_CHUNK_SIZE).toBe(1000);
  });

  it('reads as the client reads: the first bytes need one query, no page is read ahead of the client, and cancelling stops the rest', async () => {
    const acc = await createAccount(t);
    await t.db.contact.createMany({
      data: Array.from({ length: 30 }, (_, i) => ({ accountId: acc.id, firstName: `c${i}`, createdAt: new Date(Date.UTC(2022, 0, 1) + i * 1000) })),
    });
    const takes: number[] = [];
    const settle = () => new Promise((resolve) => setTimeout(resolve, 50));
    // Pages of one row and chunks of one line at least: any page read before the client asks shows as a query.
    const reader = contactsCsvStream(countingDb(takes), acc.id, { chunkSize: 1, chunkChars: 1 }).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toMatch(/^First Name/);
    await settle();
    expect(takes, 'pages read while the client has not asked again').toEqual([1]);
    await reader.read();
    await reader.cancel();
    await settle();
    expect(takes).toEqual([1, 1]);
  });

  it('hands the response chunks of about 64 KiB, not one chunk per row', async () => {
    const acc = await createAccount(t);
    await t.db.contact.createMany({
      data: Array.from({ length: 2500 }, (_, i) => ({ accountId: acc.id, firstName: `Contact number ${i}`, email: `contact${i}@example.com` })),
    });
    const chunks: number[] = [];
    for await (const chunk of contactsCsvStream(t.db, acc.id) as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk.length);
    const total = chunks.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(2 * CSV_CHUNK_CHARS);
    expect(chunks.length).toBeLessThanOrEqual(Math.ceil(total / CSV_CHUNK_CHARS));
    for (const size of chunks.slice(0, -1)) expect(size).toBeGreaterThanOrEqual(CSV_CHUNK_CHARS);
  });

  it('a failing query errors the stream instead of leaving the response hanging', async () => {
    const broken = { $queryRaw: () => Promise.reject(new Error('boom')) } as unknown as PrismaClient;
    await expect(new Response(contactsCsvStream(broken, 'x')).text()).rejects.toThrow();
  });
});
