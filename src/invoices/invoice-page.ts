// The client's invoice page (docs/decisions.md §20): plain HTML from the document the PDF shows too,
// no script at all, one style element allowed by a per-response nonce, nothing from another origin.
// Every string from the account or its client goes through escapeHtml.
import { escapeHtml } from '../forms/form-page.js';
import { displayDay, displayMoney, lineColumns, negated, STATUS_LABELS, totalsOf, type InvoiceDocument } from './invoice-document.js';

/** Nothing but this response's style: no script, image, font, frame, form or connection. */
export const invoicePageCsp = (nonce: string): string =>
  [`default-src 'none'`, `style-src 'nonce-${nonce}'`, `base-uri 'none'`, `form-action 'none'`, `frame-ancestors 'none'`].join('; ');

const STYLE = `
:root { color-scheme: light dark; --fg: #1a1a1a; --muted: #5a5a5a; --bg: #f4f4f2; --card: #fff; --rule: #d6d6d6; --accent: #1f5fbf; }
@media (prefers-color-scheme: dark) { :root { --fg: #ececec; --muted: #b0b0b0; --bg: #161616; --card: #222; --rule: #444; --accent: #8ab4ff; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; overflow-wrap: anywhere; }
main { max-width: 56rem; margin: 2rem auto; padding: 2rem; background: var(--card); border-radius: 8px; }
h1, h2, p, dd, th, td, caption { overflow-wrap: anywhere; }
.issuer { margin: 0; font-size: 1.1rem; font-weight: 600; }
h1 { margin: 0.25rem 0 0.5rem; font-size: 1.75rem; }
h2 { font-size: 1.1rem; margin: 2rem 0 0.5rem; }
.status { display: inline-block; margin: 0; padding: 0.1rem 0.6rem; border: 1px solid var(--rule); border-radius: 999px; font-size: 0.9rem; }
.actions { margin: 1.5rem 0 0; }
.actions a { display: inline-block; padding: 0.5rem 1rem; border-radius: 6px; background: var(--accent); color: var(--card); font-weight: 600; text-decoration: none; }
.actions a:focus-visible { outline: 3px solid var(--fg); outline-offset: 2px; }
dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.25rem 1.5rem; margin: 0; }
dt { color: var(--muted); }
dd { margin: 0; }
table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
caption { text-align: left; color: var(--muted); padding-bottom: 0.5rem; }
th, td { padding: 0.45rem 0.5rem; border-bottom: 1px solid var(--rule); text-align: right; vertical-align: top; }
th:first-child, td:first-child { text-align: left; padding-left: 0; }
th:last-child, td:last-child { padding-right: 0; }
thead th { font-size: 0.9rem; color: var(--muted); }
tbody th { font-weight: normal; }
.lines td { overflow-wrap: normal; }
.lines .rate { display: block; color: var(--muted); font-size: 0.85rem; }
.totals { width: auto; min-width: 20rem; margin-left: auto; }
.totals .strong th, .totals .strong td { font-weight: 700; }
.memo { white-space: pre-wrap; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
@media (max-width: 40rem) {
  main { margin: 0; border-radius: 0; padding: 1rem; }
  .totals { width: 100%; min-width: 0; }
  dl { grid-template-columns: minmax(0, 1fr); gap: 0; }
  dd { margin-bottom: 0.5rem; }
}
@media screen and (max-width: 48rem) {
  /* The lines reflow: one block per line, each value under the line's description with its column's name. */
  .lines, .lines caption, .lines tbody, .lines tr, .lines th, .lines td { display: block; }
  .lines thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  .lines tr { padding: 0.5rem 0; border-bottom: 1px solid var(--rule); }
  .lines th, .lines td { border: 0; padding: 0.1rem 0; text-align: right; white-space: normal; }
  .lines tbody th { text-align: left; font-weight: 600; }
  .lines td { display: flex; justify-content: space-between; gap: 1rem; }
  .lines td::before { content: attr(data-label); color: var(--muted); text-align: left; }
  .lines .rate { display: inline; }
}
@page { margin: 15mm; }
@media print {
  :root { --fg: #000; --muted: #333; --bg: #fff; --card: #fff; --rule: #999; }
  /* Compact enough that a short invoice (a handful of lines and a memo) is one A4 page. */
  body { font-size: 10pt; line-height: 1.35; }
  main { max-width: none; margin: 0; padding: 0; border-radius: 0; }
  h1 { font-size: 16pt; margin: 0.1rem 0 0.3rem; }
  h2 { font-size: 11pt; margin: 1rem 0 0.25rem; }
  th, td { padding: 0.2rem 0.4rem; }
  .lines thead th, .lines td { overflow-wrap: normal; white-space: nowrap; }
  .lines .rate { display: inline; margin-left: 0.2rem; }
  .totals { min-width: 16rem; }
  .screen-only { display: none; }
  tr, .totals, .memo { break-inside: avoid; }
  h2 { break-after: avoid; }
  thead { display: table-header-group; }
}
`;

function page(title: string, nonce: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

const money = (doc: InvoiceDocument, amount: string) => escapeHtml(displayMoney(amount, doc.currency));
const isZero = (amount: string) => /^-?0(\.0+)?$/.test(amount);

/** The invoice page; `pdfPath` is its PDF's link (/i/{token}/pdf). */
export function renderInvoicePage(doc: InvoiceDocument, pdfPath: string, nonce: string): string {
  const facts: [string, string][] = [['From', doc.accountName]];
  if (doc.contactName) facts.push(['Bill to', doc.contactName]);
  if (doc.issuedOn) facts.push(['Issued', displayDay(doc.issuedOn)]);
  facts.push(['Due', displayDay(doc.dueOn)]);
  if (doc.paidOn) facts.push(['Paid', displayDay(doc.paidOn)]);
  const details = facts.map(([label, value]) => `<dt>${label}</dt><dd>${escapeHtml(value)}</dd>`).join('\n');

  // Amount is each line's quantity × unit price, so the column adds up to the subtotal; the discount is
  // money in its own column (adding up to the discount total), its rate beside it (docs/invoices.md).
  // The roles are written out: the narrow layout displays the table's parts as blocks, and a browser
  // may then stop announcing them as a table.
  const cell = (label: string, value: string) => `<td role="cell" data-label="${label}"><span>${value}</span></td>`;
  const lines = doc.lines.length === 0 ? '' : `<h2 id="lines-title">Lines</h2>
<table class="lines" role="table" aria-labelledby="lines-title">
<caption>What invoice ${escapeHtml(doc.invoiceNumber)} bills, in ${escapeHtml(doc.currency)}: each amount is quantity × unit price, before discount and tax</caption>
<thead role="rowgroup"><tr role="row"><th scope="col" role="columnheader">Description</th><th scope="col" role="columnheader">Quantity</th><th scope="col" role="columnheader">Unit price</th><th scope="col" role="columnheader">Discount</th><th scope="col" role="columnheader">Tax rate</th><th scope="col" role="columnheader">Amount</th></tr></thead>
<tbody role="rowgroup">
${doc.lines.map((l) => {
    const { gross, discount } = lineColumns(l, doc.currency);
    const rate = isZero(l.discountPercent) ? '' : ` <span class="rate">(${escapeHtml(l.discountPercent)} %)</span>`;
    return `<tr role="row"><th scope="row" role="rowheader">${escapeHtml(l.description)}</th>${cell('Quantity', escapeHtml(l.quantity))}${cell('Unit price', money(doc, l.unitPrice))}${cell('Discount', `${money(doc, negated(discount))}${rate}`)}${cell('Tax rate', `${escapeHtml(l.taxRate)} %`)}${cell('Amount', money(doc, gross))}</tr>`;
  }).join('\n')}
</tbody>
</table>`;

  const totals = totalsOf(doc);
  const totalsTable = `<h2 id="totals-title">Totals</h2>
<table class="totals" aria-labelledby="totals-title">
<caption>Totals in ${escapeHtml(doc.currency)}</caption>
<tbody>
${totals.map(([label, value, strong]) => `<tr${strong ? ' class="strong"' : ''}><th scope="row">${label}</th><td>${money(doc, value)}</td></tr>`).join('\n')}
</tbody>
</table>`;

  const memo = doc.memo ? `<h2>Memo</h2>\n<p class="memo">${escapeHtml(doc.memo)}</p>` : '';
  const body = `<p class="issuer">${escapeHtml(doc.accountName)}</p>
<h1>Invoice ${escapeHtml(doc.invoiceNumber)}</h1>
<p class="status">Status: ${STATUS_LABELS[doc.status]}</p>
<p class="actions screen-only"><a href="${escapeHtml(pdfPath)}" download>Download PDF<span class="visually-hidden"> of invoice ${escapeHtml(doc.invoiceNumber)}</span></a></p>
<h2 id="details-title">Details</h2>
<dl aria-labelledby="details-title">
${details}
</dl>
${lines}
${totalsTable}
${memo}`;
  return page(`Invoice ${doc.invoiceNumber} from ${doc.accountName}`, nonce, body);
}

/** The page for an unknown token, a draft or a cancelled invoice (one answer: no oracle), and other refusals. */
export function renderInvoiceMessagePage(title: string, text: string, nonce: string): string {
  return page(title, nonce, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(text)}</p>`);
}
