// A thread of the PDF pool (src/invoices/pdf-pool.ts): draws one invoice document and hands its
// bytes back, moved rather than copied. Nothing is read here: the document is all it shows.
import { Piscina } from 'piscina';
import type { InvoiceDocument } from './invoice-document.js';
import { invoicePdfBytes } from './invoice-pdf.js';

/** Tests hold the thread here while its first cell is 1, to fill the pool (startPdfPool's `gate`); absent otherwise. */
const gate = (Piscina.workerData as { gate?: SharedArrayBuffer } | undefined)?.gate;

export default async function draw(document: InvoiceDocument): Promise<Uint8Array> {
  if (gate) Atomics.wait(new Int32Array(gate), 0, 1);
  const bytes = await invoicePdfBytes(document);
  // Its own ArrayBuffer (not a slice of Node's shared pool), so it can be transferred.
  const own = new Uint8Array(bytes.length);
  own.set(bytes);
  return Piscina.move(own) as unknown as Uint8Array;
}
