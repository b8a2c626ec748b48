// The client's page (docs/decisions.md §20): which invoices a page token shows, and what a view does.
import { InvoiceStatus, type Prisma } from '../generated/prisma/client.js';
import { emit } from '../events/emit.js';
import { VISITOR } from '../events/types.js';
import { assertTransition, INVOICE_MACHINE } from '../state-machines.js';
import { loadInvoiceDocument, type InvoiceDocument } from './invoice-document.js';

/** A draft has no page yet; a cancelled invoice's page is gone (the same 404 as an unknown token). */
export const showableByToken = (status: InvoiceStatus): boolean => status !== InvoiceStatus.draft && status !== InvoiceStatus.cancelled;

/**
 * User-Agent tokens of link previews, unfurlers and link scanners (docs/invoices.md "Who marks an
 * invoice viewed"): a chat, a social network, a mail scanner or a search engine that fetches the
 * page to show a card or check it is not its client reading it. Matched case-insensitively anywhere
 * in the header. In-app browsers (Facebook's FBAN, Telegram's, WhatsApp opening Safari) carry none.
 */
export const LINK_PREVIEW_AGENTS = [
  'Slackbot', // Slack's unfurler ("Slackbot-LinkExpanding 1.0")
  'Slack-ImgProxy',
  'facebookexternalhit', // Facebook, Messenger, Instagram
  'Facebot',
  'Twitterbot', // X
  'LinkedInBot',
  'WhatsApp', // "WhatsApp/2.23.20.0 A"
  'TelegramBot',
  'Discordbot',
  'Googlebot',
  'Google-InspectionTool',
  'bingbot',
  'BingPreview', // Bing's and Outlook's previews, Microsoft's link checks
  'MicrosoftPreview', // Outlook and Teams cards
  'SkypeUriPreview', // Teams and Skype
  'Applebot', // iMessage's previews
  'redditbot',
  'Pinterestbot',
  'Mastodon', // each Mastodon server fetching a card
  'Bluesky', // "Bluesky Cardyb"
  'Embedly',
  'Iframely',
  'vkShare',
] as const;

const PREVIEW = new RegExp(LINK_PREVIEW_AGENTS.map((token) => token.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'i');

/** Whether a request by this method and User-Agent is a client reading the page: never a HEAD, never a preview. */
export const readsAsView = (method: string, userAgent: string | null): boolean => method.toUpperCase() !== 'HEAD' && !(userAgent && PREVIEW.test(userAgent));

type Write = <T>(work: (tx: Prisma.TransactionClient) => Promise<T>) => Promise<T>;

/**
 * The page's document for `token` (null: none to show). Only the first view of a `sent` invoice
 * by its reader (not a HEAD, not a link preview) writes: every later view, and every view of any other status, is a read.
 */
export async function showInvoicePage(
  db: Prisma.TransactionClient,
  token: string,
  write: Write,
  /** The request's method and User-Agent: a HEAD or a link preview (LINK_PREVIEW_AGENTS) shows the invoice and changes nothing. */
  reader: { method: string; userAgent: string | null },
): Promise<InvoiceDocument | null> {
  const document = await loadInvoiceDocument(db, { pageToken: token });
  if (!document || !showableByToken(document.status)) return null;
  if (document.status !== InvoiceStatus.sent || !readsAsView(reader.method, reader.userAgent)) return document;
  await write((tx) => markViewed(tx, token));
  // Whoever moved it (this view or a concurrent one), the page shows the invoice as it is now.
  return loadInvoiceDocument(db, { pageToken: token });
}

/**
 * sent -> viewed, with `invoice.viewed` and `invoice.status_changed` (actor visitor). The status is
 * the UPDATE's condition, so of concurrent first views (any number of instances) exactly one moves
 * it and emits; the others find nothing to move. Answers whether this one did.
 */
export async function markViewed(tx: Prisma.TransactionClient, token: string): Promise<boolean> {
  assertTransition(INVOICE_MACHINE, InvoiceStatus.sent, InvoiceStatus.viewed);
  const [moved] = await tx.invoice.updateManyAndReturn({ where: { pageToken: token, status: InvoiceStatus.sent }, data: { status: InvoiceStatus.viewed } });
  if (!moved) return false;
  await emit(tx, { type: 'invoice.viewed', accountId: moved.accountId, actor: VISITOR, object: moved });
  await emit(tx, { type: 'invoice.status_changed', accountId: moved.accountId, actor: VISITOR, object: moved, previous: { status: InvoiceStatus.sent } });
  return true;
}
