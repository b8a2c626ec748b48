// npm run bench:pdf -- [--lines 100] [--runs 200] [--leak 1000]
// The invoice PDF (docs/decisions.md §20) against its targets: a 100-line invoice's PDF drawn and
// streamed to the end in ≤ 50 ms at p50 (one client), and the process's RSS growing ≤ 20 MB over
// 1,000 PDFs. In process, from the invoice document both routes draw from (src/invoices/invoice-document.ts):
// what the routes add is one indexed read of the invoice and its lines.
import { loadavg } from 'node:os';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { InvoiceDocument } from '../../src/invoices/invoice-document.js';
import { pdfFileName } from '../../src/invoices/invoice-document.js';
import { invoicePdf } from '../../src/invoices/invoice-pdf.js';
import { formatMinor, priceLines, scaled } from '../../src/invoices/money.js';
import { intFlag, parseFlags } from './common.js';

const TARGETS = { p50Ms: 50, rssGrowthMb: 20 };

/** A document like a real one: priced by the service's own money code, descriptions that wrap now and then. */
function documentOf(count: number): InvoiceDocument {
  const input = Array.from({ length: count }, (_, i) => ({
    description: i % 5 === 0 ? `Design work, week ${i + 1}: workshops, two rounds of revisions and the final files for print and web` : `Consulting hour ${i + 1}`,
    quantity: 1 + (i % 4) * 0.25,
    unitPrice: 95 + (i % 7) * 12.5,
    discountPercent: i % 10 === 0 ? 10 : 0,
    taxRate: 20,
  }));
  const { lines, totals } = priceLines(input, 'EUR');
  return {
    accountName: 'Northwind Studio', invoiceNumber: 'INV-000042', status: 'sent', currency: 'EUR',
    issuedOn: '2026-11-26', dueOn: '2026-12-26', paidOn: null, contactName: 'Ada Lovelace',
    lines: lines.map((l) => ({ description: l.description, quantity: String(l.quantity), unitPrice: formatMinor(scaled(l.unitPrice, 2), 2), discountPercent: String(l.discountPercent), taxRate: String(l.taxRate), amount: l.amount, tax: l.tax })),
    ...totals, amountPaid: '0.00', amountDue: totals.total, memo: 'Payable within 30 days. Thank you for your business.',
    fileName: pdfFileName('INV-000042'),
  };
}

/**
 * Draws one PDF and reads it to the end, as a client would: its wall-clock milliseconds, the CPU
 * milliseconds the process spent on it (what a shared, busy machine does not inflate), and its bytes.
 */
async function once(document: InvoiceDocument): Promise<{ ms: number; cpuMs: number; bytes: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  let bytes = 0;
  await pipeline(invoicePdf(document), new Writable({ write: (chunk: Buffer, _encoding, done) => { bytes += chunk.length; done(); } }));
  const used = process.cpuUsage(cpu);
  return { ms: performance.now() - start, cpuMs: (used.user + used.system) / 1000, bytes };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const mb = (bytes: number) => bytes / (1024 * 1024);

async function main() {
  const flags = parseFlags(process.argv.slice(2), ['lines', 'runs', 'leak']);
  const count = intFlag(flags, 'lines', 100, 1, 100);
  const runs = intFlag(flags, 'runs', 200, 10, 100_000);
  const leak = intFlag(flags, 'leak', 1000, 0, 1_000_000);
  const document = documentOf(count);

  for (let i = 0; i < 20; i++) await once(document); // warm: fonts parsed, code compiled
  const times: number[] = [];
  const cpuTimes: number[] = [];
  let size = 0;
  for (let i = 0; i < runs; i++) {
    const { ms, cpuMs, bytes } = await once(document);
    times.push(ms);
    cpuTimes.push(cpuMs);
    size = bytes;
  }
  times.sort((a, b) => a - b);
  cpuTimes.sort((a, b) => a - b);

  globalThis.gc?.();
  // RSS is what the target names; the heap and buffers after a full GC say whether anything is kept.
  const heldBytes = () => { const m = process.memoryUsage(); return m.heapUsed + m.external; };
  const before = process.memoryUsage().rss;
  const heldBefore = heldBytes();
  let peak = before;
  for (let i = 0; i < leak; i++) {
    await once(document);
    if (i % 50 === 0) peak = Math.max(peak, process.memoryUsage().rss);
  }
  globalThis.gc?.();
  const after = process.memoryUsage().rss;
  const heldAfter = heldBytes();

  const result = {
    lines: count,
    pdfBytes: size,
    runs,
    p50Ms: Number(percentile(times, 50).toFixed(1)),
    p99Ms: Number(percentile(times, 99).toFixed(1)),
    maxMs: Number(times[times.length - 1]!.toFixed(1)),
    cpuP50Ms: Number(percentile(cpuTimes, 50).toFixed(1)),
    cpuP99Ms: Number(percentile(cpuTimes, 99).toFixed(1)),
    loadAverage: Number(loadavg()[0]!.toFixed(1)),
    pdfs: leak,
    rssBeforeMb: Number(mb(before).toFixed(1)),
    rssAfterMb: Number(mb(after).toFixed(1)),
    rssPeakMb: Number(mb(Math.max(peak, after)).toFixed(1)),
    rssGrowthMb: Number(mb(after - before).toFixed(1)),
    heapAndBuffersGrowthMb: Number(mb(heldAfter - heldBefore).toFixed(1)),
    targets: TARGETS,
    met: percentile(times, 50) <= TARGETS.p50Ms && mb(after - before) <= TARGETS.rssGrowthMb,
  };
  console.log(JSON.stringify(result, null, 2));
  if (!result.met) process.exitCode = 1;
}

await main();
