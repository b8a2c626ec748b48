// The invoice's PDF (docs/decisions.md §20, §26; docs/invoices.md): drawn by pdfkit from the document
// the client's page shows too (invoice-document.ts), as real text a reader can select, search and
// extract, in every script a name or line is written in, and tagged (headings, the lines as a table,
// reading order) for screen readers, toward PDF/UA. Drawn in a thread of the PDF pool (pdf-pool.ts,
// pdf-worker.ts), never on the thread that serves requests (§26), and kept per version
// (invoice-pdf-cache.ts).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Readable } from 'node:stream';
import * as fontkit from 'fontkit';
import PDFDocument from 'pdfkit';
import { displayDay, displayMoney, lineColumns, negated, STATUS_LABELS, totalsOf, type InvoiceDocument } from './invoice-document.js';

const MARGIN = 50;
const MUTED = '#555555';
const RULE = '#bbbbbb';
const require = createRequire(import.meta.url);

// Fonts. DejaVu Sans (embedded, subset to the glyphs used) draws Latin, Greek and Cyrillic: the PDF's
// 14 standard fonts only know Windows-1252. It is parsed once per process (thread) and shared by
// every document (each keeps its own subset): parsing the tables per document took most of a PDF's
// time. What DejaVu lacks falls back, character by character, to Noto fonts shipped by npm packages
// (@embedpdf/fonts-*, @expo-google-fonts/noto-sans-*), each parsed the first time a document needs
// it, so an invoice in Latin alone never loads one.
type Weight = 'regular' | 'bold';
type FontKey = `${string}-${Weight}`;
const dejavu = (name: string) => fontkit.create(readFileSync(require.resolve(`dejavu-fonts-ttf/ttf/${name}`))) as fontkit.Font;
const DEJAVU: Record<Weight, fontkit.Font> = { regular: dejavu('DejaVuSans.ttf'), bold: dejavu('DejaVuSans-Bold.ttf') };

/** `actual`: glyphs stand in another order than the characters (Devanagari's vowel signs before their consonant), so the run carries its text as ActualText. */
type Fallback = { name: string; file: (weight: Weight) => string; rtl: boolean; first?: RegExp; actual?: boolean };
/** A font file of an @embedpdf/fonts-* package (its exports name no files: they lie in fonts/ beside dist/). */
const embedpdf = (pkg: string, regular: string, bold: string) => (weight: Weight) =>
  path.join(path.dirname(require.resolve(pkg)), '..', 'fonts', weight === 'bold' ? bold : regular);
/** A font file of an @expo-google-fonts/* package (static TTFs, one folder per weight). */
const googleFonts = (pkg: string, family: string) => (weight: Weight) =>
  require.resolve(weight === 'bold' ? `${pkg}/700Bold/${family}_700Bold.ttf` : `${pkg}/400Regular/${family}_400Regular.ttf`);
/**
 * In order of preference; `first`: the script it is chosen for before DejaVu (which draws Arabic and
 * Hebrew poorly, unshaped). Hangul goes to the Korean font first; Han characters and kana to
 * Japanese, then Korean, then Simplified Chinese.
 */
const FALLBACKS: Fallback[] = [
  {
    name: 'arabic', rtl: true, file: embedpdf('@embedpdf/fonts-arabic', 'NotoNaskhArabic-Regular.ttf', 'NotoNaskhArabic-Bold.ttf'),
    first: /[\u0600-\u06FF\u0750-\u077F\u0870-\u08FF\uFB50-\uFDFF\uFE70-\uFEFF]/u,
  },
  { name: 'hebrew', rtl: true, file: embedpdf('@embedpdf/fonts-hebrew', 'NotoSansHebrew-Regular.ttf', 'NotoSansHebrew-Bold.ttf'), first: /[\u0590-\u05FF\uFB1D-\uFB4F]/u },
  { name: 'devanagari', rtl: false, actual: true, file: googleFonts('@expo-google-fonts/noto-sans-devanagari', 'NotoSansDevanagari'), first: /[\u0900-\u097F\uA8E0-\uA8FF]/u },
  { name: 'thai', rtl: false, file: googleFonts('@expo-google-fonts/noto-sans-thai', 'NotoSansThai'), first: /[\u0E00-\u0E7F]/u },
  { name: 'jp', rtl: false, file: embedpdf('@embedpdf/fonts-jp', 'NotoSansJP-Regular.otf', 'NotoSansJP-Bold.otf') },
  {
    name: 'kr', rtl: false, file: embedpdf('@embedpdf/fonts-kr', 'NotoSansKR-Regular.otf', 'NotoSansKR-Bold.otf'),
    first: /[\u1100-\u11FF\u3130-\u318F\uA960-\uA97F\uAC00-\uD7FF]/u,
  },
  { name: 'sc', rtl: false, file: embedpdf('@embedpdf/fonts-sc', 'NotoSansHans-Regular.otf', 'NotoSansHans-Bold.otf') },
];
const parsed = new Map<FontKey, fontkit.Font>();
function fallbackFont(fallback: Fallback, weight: Weight): fontkit.Font {
  const key: FontKey = `${fallback.name}-${weight}`;
  let font = parsed.get(key);
  if (!font) {
    font = fontkit.create(readFileSync(fallback.file(weight))) as fontkit.Font;
    parsed.set(key, font);
  }
  return font;
}

/** Text DejaVu draws whole, with nothing to shape or reverse: Latin, Greek, Cyrillic and common punctuation. */
const PLAIN = /^[\u0000-\u024F\u0300-\u036F\u0370-\u03FF\u0400-\u04FF\u1E00-\u1EFF\u2000-\u206F\u20A0-\u20BF\u2100-\u214F]*$/u;
/** Characters that belong to no script: they stay in the run around them when its font has them. */
const NEUTRAL = /[\s\p{P}\p{S}\p{N}]/u;
const DIGIT = /\p{Nd}/u;
/** What a number keeps inside it: its separators. */
const NUMBER_INSIDE = /[\p{Nd}.,:/]/u;

/** `digits`: a number inside right-to-left text, drawn left to right where that text puts it. */
type Run = { text: string; key: FontKey; font: fontkit.Font; rtl: boolean; actual?: boolean; digits?: boolean };

/** Splits text into runs of one font each: the first font (by FALLBACKS' order) that has the character's glyph. */
function runsOf(text: string, weight: Weight): Run[] {
  if (PLAIN.test(text)) return [{ text, key: `dejavu-${weight}`, font: DEJAVU[weight], rtl: false }];
  const runs: Run[] = [];
  for (const char of text) {
    const cp = char.codePointAt(0)!;
    const last = runs[runs.length - 1];
    // A number inside right-to-left text is a run of its own, read left to right ("2026", "1,250.00").
    if (last && (last.rtl || last.digits) && (DIGIT.test(char) || (last.digits && NUMBER_INSIDE.test(char))) && last.font.hasGlyphForCodePoint(cp)) {
      if (last.digits) last.text += char;
      else runs.push({ text: char, key: last.key, font: last.font, rtl: false, digits: true });
      continue;
    }
    if (last && !last.digits && NEUTRAL.test(char) && last.font.hasGlyphForCodePoint(cp)) {
      last.text += char;
      continue;
    }
    const pick = pickFont(char, cp, weight);
    if (last && !last.digits && last.key === pick.key) last.text += char;
    else runs.push({ text: char, ...pick });
  }
  return runs;
}

function pickFont(char: string, cp: number, weight: Weight): Omit<Run, 'text'> {
  for (const fallback of FALLBACKS) {
    if (fallback.first?.test(char)) return { key: `${fallback.name}-${weight}`, font: fallbackFont(fallback, weight), rtl: fallback.rtl, actual: fallback.actual };
  }
  if (DEJAVU[weight].hasGlyphForCodePoint(cp)) return { key: `dejavu-${weight}`, font: DEJAVU[weight], rtl: false };
  for (const fallback of FALLBACKS) {
    const font = fallbackFont(fallback, weight);
    if (font.hasGlyphForCodePoint(cp)) return { key: `${fallback.name}-${weight}`, font, rtl: fallback.rtl, actual: fallback.actual };
  }
  return { key: `dejavu-${weight}`, font: DEJAVU[weight], rtl: false }; // no font has it: DejaVu's empty box
}

const TRAILING_NEUTRALS = /[\s\p{P}\p{S}]+$/u;
const NEUTRAL_ONLY = /^[\s\p{P}\p{S}]*$/u;

/**
 * The runs in the order they are drawn, left to right, in a left-to-right paragraph (a simplified
 * Unicode bidi): consecutive right-to-left runs, with the spaces and punctuation between them (an
 * Arabic name, a dash, a Hebrew one), form one right-to-left stretch drawn last run first; spaces and
 * punctuation that end such a stretch belong to what follows it. fontkit lays out each right-to-left
 * run itself, right to left; a number inside such a stretch keeps its digits left to right.
 */
function visualOrder(runs: Run[]): Run[] {
  if (!runs.some((run) => run.rtl)) return runs;
  const strong: ('rtl' | 'ltr' | null)[] = [];
  for (const run of runs) {
    // A number takes the direction of the strong text before it (so one after an Arabic word stays in its stretch).
    if (run.digits) strong.push(strong.findLast(Boolean) === 'rtl' ? 'rtl' : 'ltr');
    else strong.push(run.rtl ? 'rtl' : NEUTRAL_ONLY.test(run.text) ? null : 'ltr');
  }
  const inRtl = runs.map((_run, i) => {
    if (strong[i]) return strong[i] === 'rtl';
    return strong.slice(0, i).reverse().find(Boolean) === 'rtl' && strong.slice(i + 1).find(Boolean) === 'rtl';
  });
  const split: { run: Run; rtl: boolean }[] = [];
  runs.forEach((run, i) => {
    const tail = inRtl[i] && !inRtl[i + 1] ? TRAILING_NEUTRALS.exec(run.text) : null;
    if (!tail || tail.index === 0) return split.push({ run, rtl: inRtl[i]! });
    split.push({ run: { ...run, text: run.text.slice(0, tail.index) }, rtl: true });
    split.push({ run: { ...run, text: tail[0], rtl: false }, rtl: false }); // laid out left to right, in the font that has it
  });
  const ordered: Run[] = [];
  for (let i = 0; i < split.length; ) {
    if (!split[i]!.rtl) {
      ordered.push(split[i++]!.run);
      continue;
    }
    const start = i;
    while (i < split.length && split[i]!.rtl) i++;
    // Spaces and punctuation between right-to-left runs read right to left too.
    const stretch = split.slice(start, i).map(({ run }) => (run.rtl || run.digits ? run : { ...run, text: [...run.text].reverse().join('') }));
    ordered.push(...stretch.reverse());
  }
  return ordered;
}

type Pdf = PDFKit.PDFDocument & { _registeredFonts: Record<string, unknown> };

function useFont(pdf: Pdf, run: Pick<Run, 'key' | 'font'>) {
  // pdfkit takes a fontkit font as it is (its types only list file names and buffers).
  if (!pdf._registeredFonts[run.key]) pdf.registerFont(run.key, run.font as never);
  pdf.font(run.key);
}

type TextOptions = PDFKit.Mixins.TextOptions;

/**
 * pdf.text for any script: each run in its font, one after the other on the same lines (pdfkit's
 * `continued`). A right-to-left run (Arabic, Hebrew) is shaped and laid out right to left by fontkit,
 * a line at a time, so its words stand in reading order with their spaces, and extractors read it
 * back as written. Not a full bidi algorithm: runs follow each other left to right, as in a
 * left-to-right paragraph (a Latin sentence quoting an Arabic name reads right).
 */
function write(pdf: Pdf, text: string, weight: Weight, x: number | undefined, y: number | undefined, options: TextOptions = {}) {
  const runs = visualOrder(runsOf(text, weight));
  if (runs.length === 1 && !runs[0]!.rtl && !runs[0]!.actual) {
    useFont(pdf, runs[0]!);
    pdf.text(text, x, y, options);
    return;
  }
  // Devanagari's glyphs stand in another order than its characters: the whole text is given as
  // ActualText (not with right-to-left runs, whose glyphs extractors already read right).
  const actual = runs.some((run) => run.actual) && !runs.some((run) => run.rtl);
  if (actual) pdf.markContent('Span', { actual: text } as never);
  runs.forEach((run, i) => {
    useFont(pdf, run);
    const more = i < runs.length - 1;
    // `features` (none beyond the font's defaults) makes pdfkit lay the line out as one run: without
    // it, it lays out word by word, and a right-to-left line came out with its words in left-to-right
    // order and its spaces at the words' ends.
    const runOptions = { ...options, continued: more, ...(run.rtl ? { features: [] } : {}) };
    if (i === 0) pdf.text(run.text, x, y, runOptions);
    else pdf.text(run.text, runOptions);
  });
  if (actual) pdf.endMarkedContent();
}

/** The width of text set in its runs' fonts at the current size. */
function widthOf(pdf: Pdf, text: string, weight: Weight): number {
  let width = 0;
  for (const run of runsOf(text, weight)) {
    useFont(pdf, run);
    width += pdf.widthOfString(run.text);
  }
  return width;
}

type Line = InvoiceDocument['lines'][number];
type Column = { title: string; width: number; value: (line: Line, currency: string, money: { gross: string; discount: string }) => string };

// A4 is 595 pt wide: 495 between the margins. As on the page: Amount is quantity × unit price (the
// column adds up to the subtotal), the discount is money in its own column (adding up to the discount).
// The first column is the line's description (left, wrapping); the others are right-aligned.
const COLUMNS: Column[] = [
  { title: 'Description', width: 180, value: (l) => l.description },
  { title: 'Qty', width: 35, value: (l) => l.quantity },
  { title: 'Unit price', width: 80, value: (l, c) => displayMoney(l.unitPrice, c) },
  { title: 'Discount', width: 75, value: (_l, c, m) => displayMoney(negated(m.discount), c) },
  { title: 'Tax %', width: 35, value: (l) => l.taxRate },
  { title: 'Amount', width: 90, value: (_l, c, m) => displayMoney(m.gross, c) },
];

/** The invoice's PDF, whole. Nothing is read here: `document` is all it shows. */
export async function invoicePdfBytes(document: InvoiceDocument): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of invoicePdf(document)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The invoice as a PDF stream (application/pdf), as pdfkit writes it. */
export function invoicePdf(document: InvoiceDocument): Readable {
  const pdf = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    info: { Title: `Invoice ${document.invoiceNumber}`, Author: document.accountName, Subject: `Invoice ${document.invoiceNumber} from ${document.accountName}` },
    lang: 'en',
    displayTitle: true,
    // Tagged (a structure tree, marked content, artifacts), declared PDF/UA-1 in its metadata.
    tagged: true,
    pdfVersion: '1.7',
    subset: 'PDF/UA',
    // Pages are kept until the end to number them ("Page 2 of 3") once the count is known.
    bufferPages: true,
    // No default font (not pdfkit's Helvetica: reading its metrics cost every document a few
    // milliseconds; nor DejaVu given here, which pdfkit would then open anew, comparing the fonts'
    // name tables, on every switch to it by name): every text names its font (useFont).
    font: null as never,
  } as unknown as PDFKit.PDFDocumentOptions) as Pdf;
  draw(pdf, document);
  numberPages(pdf, document);
  pdf.end();
  return pdf;
}

type Struct = PDFKit.PDFStructureElement;

/** Draws into a new structure element of `type` under `parent` (its content marked, in reading order). */
function tagged(pdf: Pdf, parent: Struct, type: string, drawIt: () => void, options: Record<string, unknown> = {}): void {
  const element = pdf.struct(type as never, options as never);
  parent.add(element);
  const content = pdf.markStructureContent(type as never);
  drawIt();
  pdf.endMarkedContent();
  element.add(content);
  element.end();
}

/** Drawing that is not content (rules, page numbers): marked as an artifact, out of the reading order. */
function artifact(pdf: Pdf, type: 'Layout' | 'Pagination', drawIt: () => void) {
  pdf.markContent('Artifact', { type } as never);
  drawIt();
  pdf.endMarkedContent();
}

function draw(pdf: Pdf, doc: InvoiceDocument) {
  const left = MARGIN;
  const width = pdf.page.width - 2 * MARGIN;
  const root = pdf.struct('Document');
  pdf.addStructure(root);

  pdf.fontSize(18).fillColor('black');
  tagged(pdf, root, 'P', () => write(pdf, doc.accountName, 'bold', left, MARGIN, { width }));
  pdf.moveDown(0.3).fontSize(14);
  tagged(pdf, root, 'H1', () => write(pdf, `Invoice ${doc.invoiceNumber}`, 'bold', undefined, undefined, { width }));
  pdf.moveDown(0.2).fontSize(10).fillColor(MUTED);
  tagged(pdf, root, 'P', () => write(pdf, `Status: ${STATUS_LABELS[doc.status]}`, 'regular', undefined, undefined, { width }));
  pdf.moveDown(0.8).fillColor('black');

  const facts: [string, string][] = [];
  if (doc.contactName) facts.push(['Bill to', doc.contactName]);
  if (doc.issuedOn) facts.push(['Issued', displayDay(doc.issuedOn)]);
  facts.push(['Due', displayDay(doc.dueOn)]);
  if (doc.paidOn) facts.push(['Paid', displayDay(doc.paidOn)]);
  facts.push(['Currency', doc.currency]);
  for (const [label, value] of facts) tagged(pdf, root, 'P', () => pair(pdf, label, value, left, 80, width - 80));
  pdf.moveDown(1);

  if (doc.lines.length > 0) linesTable(pdf, root, doc);

  const totals = totalsOf(doc);
  const labelWidth = 120;
  const valueWidth = 120;
  const x = left + width - labelWidth - valueWidth;
  ensureRoom(pdf, totals.length * 16 + 10);
  pdf.moveDown(0.5);
  const table = pdf.struct('Table');
  root.add(table);
  for (const [label, value, strong] of totals) {
    const y = pdf.y;
    const row = pdf.struct('TR');
    table.add(row);
    pdf.fontSize(10).fillColor('black');
    tagged(pdf, row, 'TH', () => write(pdf, label, strong ? 'bold' : 'regular', x, y, { width: labelWidth, lineBreak: false }), { scope: 'Row' });
    const shown = displayMoney(value, doc.currency);
    tagged(pdf, row, 'TD', () => write(pdf, shown, strong ? 'bold' : 'regular', x + labelWidth + valueWidth - widthOf(pdf, shown, strong ? 'bold' : 'regular'), y, { lineBreak: false }));
    row.end();
    pdf.y = y + 16;
  }
  table.end();

  if (doc.memo) {
    pdf.x = left;
    pdf.moveDown(1);
    pdf.fontSize(10);
    ensureRoom(pdf, pdf.currentLineHeight(true) * 2 + 4);
    tagged(pdf, root, 'H2', () => write(pdf, 'Memo', 'bold', left, pdf.y, { width }));
    tagged(pdf, root, 'P', () => write(pdf, doc.memo!, 'regular', left, pdf.y, { width }));
  }
  root.end();
}

/** A label and its value on one line (the value wraps under itself). */
function pair(pdf: Pdf, label: string, value: string, x: number, labelWidth: number, valueWidth: number) {
  const y = pdf.y;
  pdf.fontSize(10).fillColor(MUTED);
  write(pdf, label, 'regular', x, y, { width: labelWidth, lineBreak: false });
  pdf.fillColor('black');
  write(pdf, value, 'regular', x + labelWidth, y, { width: valueWidth });
  pdf.y = Math.max(pdf.y, y + 14);
}

const bottom = (pdf: Pdf) => pdf.page.height - MARGIN;

/** A new page when fewer than `height` points are left on this one. */
function ensureRoom(pdf: Pdf, height: number): boolean {
  if (pdf.y + height <= bottom(pdf)) return false;
  pdf.addPage();
  return true;
}

/**
 * One table row, tagged TR with a TH or TD per cell: the first cell wraps, the others are one line,
 * right-aligned by measuring them (pdfkit's own alignment runs its line wrapper for every cell,
 * several times slower).
 */
function row(pdf: Pdf, table: Struct, cells: string[], weight: Weight, header: boolean): void {
  const y = pdf.y;
  const tr = pdf.struct('TR');
  table.add(tr);
  pdf.fontSize(9).fillColor('black');
  const [first, ...rest] = COLUMNS;
  tagged(pdf, tr, 'TH', () => write(pdf, cells[0]!, weight, MARGIN, y + 3, { width: first!.width - 6 }), { scope: header ? 'Column' : 'Row' });
  const end = pdf.y;
  let x = MARGIN + first!.width;
  rest.forEach((column, i) => {
    x += column.width;
    const text = cells[i + 1]!;
    tagged(pdf, tr, header ? 'TH' : 'TD', () => write(pdf, text, weight, x - widthOf(pdf, text, weight), y + 3, { lineBreak: false }), header ? { scope: 'Column' } : {});
  });
  tr.end();
  pdf.y = Math.max(end, y + 12) + 3;
}

function rule(pdf: Pdf) {
  const width = pdf.page.width - 2 * MARGIN;
  artifact(pdf, 'Layout', () => pdf.moveTo(MARGIN, pdf.y).lineTo(MARGIN + width, pdf.y).lineWidth(0.5).strokeColor(RULE).stroke());
}

/** The lines as a tagged table: its header row repeated on each page the table runs onto (the repeats are artifacts). */
function linesTable(pdf: Pdf, root: Struct, doc: InvoiceDocument) {
  const table = pdf.struct('Table');
  root.add(table);
  const head = pdf.struct('THead');
  table.add(head);
  row(pdf, head, COLUMNS.map((c) => c.title), 'bold', true);
  head.end();
  rule(pdf);
  const body = pdf.struct('TBody');
  table.add(body);
  const repeatHeader = () => {
    artifact(pdf, 'Pagination', () => {
      const y = pdf.y;
      pdf.fontSize(9).fillColor('black');
      let x = MARGIN;
      COLUMNS.forEach((column, i) => {
        useFont(pdf, { key: 'dejavu-bold', font: DEJAVU.bold });
        if (i === 0) pdf.text(column.title, x, y + 3, { lineBreak: false });
        else pdf.text(column.title, x + column.width - pdf.widthOfString(column.title), y + 3, { lineBreak: false });
        x += column.width;
      });
      pdf.y = y + 15;
      pdf.moveTo(MARGIN, pdf.y).lineTo(pdf.page.width - MARGIN, pdf.y).lineWidth(0.5).strokeColor(RULE).stroke();
    });
  };
  for (const line of doc.lines) {
    pdf.fontSize(9);
    const height = heightOf(pdf, line.description, COLUMNS[0]!.width - 6) + 6;
    if (ensureRoom(pdf, height)) repeatHeader();
    row(pdf, body, COLUMNS.map((c) => c.value(line, doc.currency, lineColumns(line, doc.currency))), 'regular', false);
  }
  body.end();
  rule(pdf);
  table.end();
}

/** The height a description takes in its cell (in its runs' fonts: the tallest of them for a mixed one). */
function heightOf(pdf: Pdf, text: string, width: number): number {
  const runs = runsOf(text, 'regular');
  let height = 0;
  for (const run of runs) {
    useFont(pdf, run);
    height = Math.max(height, pdf.heightOfString(runs.length === 1 ? text : run.text, { width }));
  }
  return runs.length === 1 ? height : Math.max(height, pdf.heightOfString(text, { width }));
}

/** Pages after the first repeat the invoice number and say "Page n of m" (an artifact: not content). */
function numberPages(pdf: Pdf, doc: InvoiceDocument) {
  const range = pdf.bufferedPageRange();
  if (range.count < 2) return;
  for (let i = 1; i < range.count; i++) {
    pdf.switchToPage(range.start + i);
    const text = `Invoice ${doc.invoiceNumber} · Page ${i + 1} of ${range.count}`;
    const margin = pdf.page.margins.top;
    pdf.page.margins.top = 0; // writing above the top margin must not start a page
    artifact(pdf, 'Pagination', () => {
      pdf.fontSize(9).fillColor(MUTED);
      write(pdf, text, 'regular', MARGIN, 25, { width: pdf.page.width - 2 * MARGIN, align: 'right', lineBreak: false });
    });
    pdf.page.margins.top = margin;
  }
}
