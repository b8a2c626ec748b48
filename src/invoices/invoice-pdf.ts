// The invoice's PDF (docs/decisions.md §20): drawn by pdfkit from the document the client's page
// shows too (invoice-document.ts), as real text a reader can select, search and extract. Drawn in a
// thread of the PDF pool (pdf-pool.ts, pdf-worker.ts), never on the thread that serves requests
// (§26), and kept per version (invoice-pdf-cache.ts).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import * as fontkit from 'fontkit';
import PDFDocument from 'pdfkit';
import { displayDay, displayMoney, lineColumns, negated, STATUS_LABELS, type InvoiceDocument } from './invoice-document.js';

const MARGIN = 50;
// DejaVu Sans (embedded, subset to the glyphs used): the PDF's 14 standard fonts only know
// Windows-1252, so a name like "Łódź" or "Σοφία" would come out as garbage. Parsed once per
// process and shared by every document (each keeps its own subset): parsing the tables per
// document took most of a PDF's time.
const fontFile = (name: string) => fontkit.create(readFileSync(createRequire(import.meta.url).resolve(`dejavu-fonts-ttf/ttf/${name}`))) as fontkit.Font;
const FONTS = { regular: fontFile('DejaVuSans.ttf'), bold: fontFile('DejaVuSans-Bold.ttf') };
const FONT = 'regular';
const BOLD = 'bold';
const MUTED = '#555555';
const RULE = '#bbbbbb';

type Line = InvoiceDocument['lines'][number];
type Column = { title: string; width: number; align: 'left' | 'right'; value: (line: Line, currency: string, money: { gross: string; discount: string }) => string };

// A4 is 595 pt wide: 495 between the margins. As on the page: Amount is quantity × unit price (the
// column adds up to the subtotal), the discount is money in its own column (adding up to the discount).
const COLUMNS: Column[] = [
  { title: 'Description', width: 180, align: 'left', value: (l) => l.description },
  { title: 'Qty', width: 35, align: 'right', value: (l) => l.quantity },
  { title: 'Unit price', width: 80, align: 'right', value: (l, c) => displayMoney(l.unitPrice, c) },
  { title: 'Discount', width: 75, align: 'right', value: (_l, c, m) => displayMoney(negated(m.discount), c) },
  { title: 'Tax %', width: 35, align: 'right', value: (l) => l.taxRate },
  { title: 'Amount', width: 90, align: 'right', value: (_l, c, m) => displayMoney(m.gross, c) },
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
    bufferPages: false,
    // Not pdfkit's default Helvetica: reading its metrics cost every document a few milliseconds.
    font: FONTS.regular as never,
  });
  // pdfkit takes a fontkit font as it is (its types only list file names and buffers).
  pdf.registerFont(FONT, FONTS.regular as never);
  pdf.registerFont(BOLD, FONTS.bold as never);
  draw(pdf, document);
  pdf.end();
  return pdf;
}

function draw(pdf: PDFKit.PDFDocument, doc: InvoiceDocument) {
  const left = MARGIN;
  const width = pdf.page.width - 2 * MARGIN;

  pdf.font(BOLD).fontSize(18).fillColor('black').text(doc.accountName, left, MARGIN, { width });
  pdf.moveDown(0.3).font(BOLD).fontSize(14).text(`Invoice ${doc.invoiceNumber}`, { width });
  pdf.moveDown(0.2).font(FONT).fontSize(10).fillColor(MUTED).text(`Status: ${STATUS_LABELS[doc.status]}`, { width });
  pdf.moveDown(0.8).fillColor('black');

  const facts: [string, string][] = [];
  if (doc.contactName) facts.push(['Bill to', doc.contactName]);
  if (doc.issuedOn) facts.push(['Issued', displayDay(doc.issuedOn)]);
  facts.push(['Due', displayDay(doc.dueOn)]);
  if (doc.paidOn) facts.push(['Paid', displayDay(doc.paidOn)]);
  facts.push(['Currency', doc.currency]);
  for (const [label, value] of facts) pair(pdf, label, value, left, 80, width - 80);
  pdf.moveDown(1);

  if (doc.lines.length > 0) linesTable(pdf, doc);

  const totals: [string, string, boolean][] = [
    ['Subtotal', doc.subtotal, false],
    ['Discount', negated(doc.discountTotal), false],
    ['Tax', doc.taxTotal, false],
    ['Total', doc.total, true],
    ['Paid', doc.amountPaid, false],
    ['Amount due', doc.amountDue, true],
  ];
  const labelWidth = 120;
  const valueWidth = 120;
  const x = left + width - labelWidth - valueWidth;
  ensureRoom(pdf, totals.length * 16 + 10);
  pdf.moveDown(0.5);
  for (const [label, value, strong] of totals) {
    const y = pdf.y;
    pdf.font(strong ? BOLD : FONT).fontSize(10).fillColor('black');
    pdf.text(label, x, y, { width: labelWidth, lineBreak: false });
    pdf.text(displayMoney(value, doc.currency), x + labelWidth, y, { width: valueWidth, align: 'right', lineBreak: false });
    pdf.y = y + 16;
  }

  if (doc.memo) {
    pdf.x = left;
    pdf.moveDown(1.5);
    ensureRoom(pdf, 40);
    pdf.font(BOLD).fontSize(10).text('Memo', left, pdf.y, { width });
    pdf.font(FONT).fontSize(10).text(doc.memo, { width });
  }
}

/** A label and its value on one line (the value wraps under itself). */
function pair(pdf: PDFKit.PDFDocument, label: string, value: string, x: number, labelWidth: number, valueWidth: number) {
  const y = pdf.y;
  pdf.font(FONT).fontSize(10).fillColor(MUTED).text(label, x, y, { width: labelWidth, lineBreak: false });
  pdf.fillColor('black').text(value, x + labelWidth, y, { width: valueWidth });
  pdf.y = Math.max(pdf.y, y + 14);
}

const bottom = (pdf: PDFKit.PDFDocument) => pdf.page.height - MARGIN;

/** A new page when fewer than `height` points are left on this one. */
function ensureRoom(pdf: PDFKit.PDFDocument, height: number): boolean {
  if (pdf.y + height <= bottom(pdf)) return false;
  pdf.addPage();
  return true;
}

/**
 * One table row: the first cell wraps, the others are one line, right-aligned by measuring them
 * (pdfkit's own alignment runs its line wrapper for every cell, several times slower).
 */
function row(pdf: PDFKit.PDFDocument, cells: string[], font: string): void {
  const y = pdf.y;
  pdf.font(font).fontSize(9).fillColor('black');
  const [first, ...rest] = COLUMNS;
  pdf.text(cells[0]!, MARGIN, y + 3, { width: first!.width - 6 });
  const end = pdf.y;
  let x = MARGIN + first!.width;
  rest.forEach((column, i) => {
    x += column.width;
    const text = cells[i + 1]!;
    pdf.text(text, x - pdf.widthOfString(text), y + 3, { lineBreak: false });
  });
  pdf.y = Math.max(end, y + 12) + 3;
}

function rule(pdf: PDFKit.PDFDocument) {
  const width = pdf.page.width - 2 * MARGIN;
  pdf.moveTo(MARGIN, pdf.y).lineTo(MARGIN + width, pdf.y).lineWidth(0.5).strokeColor(RULE).stroke();
}

/** The lines, the header row repeated on each page the table runs onto. */
function linesTable(pdf: PDFKit.PDFDocument, doc: InvoiceDocument) {
  const header = () => {
    row(pdf, COLUMNS.map((c) => c.title), BOLD);
    rule(pdf);
  };
  header();
  for (const line of doc.lines) {
    pdf.font(FONT).fontSize(9);
    if (ensureRoom(pdf, pdf.heightOfString(line.description, { width: COLUMNS[0]!.width - 6 }) + 6)) header();
    const money = lineColumns(line, doc.currency);
    row(pdf, COLUMNS.map((c) => c.value(line, doc.currency, money)), FONT);
  }
  rule(pdf);
}
