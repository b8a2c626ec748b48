import { z } from 'zod';
import { snakeCase } from '../names.js';
import { currencyCode, requiredText, TYPE_MESSAGES } from '../validation.js';
import type { ErrorDetails } from '../errors.js';
import { decimalsOf, exponentOf, formatMinor, priceLines, QUANTITY_DECIMALS, RATE_DECIMALS, scaled, type LineInput, type PricedLine, type Totals } from './money.js';

// The money fields of an invoice (docs/decisions.md §20): currency, lines and their bounds.

const MAX_MONEY = 9_999_999_999.99;
const MONEY_BOUNDS = 'Must be from 0 to 9999999999.99';
const atMost = (decimals: number) => (value: number) => decimalsOf(value) <= decimals;
const decimalsMessage = (decimals: number) => `Must have at most ${decimals} decimals`;

/** ISO 4217: lower case is upper-cased; an unknown code is refused by name (src/validation.ts). */
export const currency = currencyCode;

/** A money amount's bounds; its decimals depend on the currency (moneyProblems). */
export const amount = z.number({ error: TYPE_MESSAGES.number }).min(0, MONEY_BOUNDS).max(MAX_MONEY, MONEY_BOUNDS);

const rate = z
  .number({ error: TYPE_MESSAGES.number })
  .min(0, 'Must be from 0 to 100')
  .max(100, 'Must be from 0 to 100')
  .refine(atMost(RATE_DECIMALS), decimalsMessage(RATE_DECIMALS))
  .nullish()
  .transform((value) => value ?? 0);

// Keys in REST's spelling, so a line's problem is `lines.0.unit_price` in GraphQL and REST alike.
const line = z.object({
  description: requiredText(500),
  quantity: z
    .number({ error: TYPE_MESSAGES.number })
    .gt(0, 'Must be greater than 0 and at most 1000000')
    .max(1_000_000, 'Must be greater than 0 and at most 1000000')
    .refine(atMost(QUANTITY_DECIMALS), decimalsMessage(QUANTITY_DECIMALS))
    .nullish()
    .transform((value) => value ?? 1),
  unit_price: amount,
  discount_percent: rate,
  tax_rate: rate,
});

// A line's keys as GraphQL spells them, in REST's spelling (snakeCase of each, worked out once).
const LINE_KEYS: Record<string, string> = Object.fromEntries(['description', 'quantity', 'unitPrice', 'discountPercent', 'taxRate'].map((k) => [k, snakeCase(k)]));
const snakeKeys = (value: unknown) => {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[Object.hasOwn(LINE_KEYS, key) ? LINE_KEYS[key]! : snakeCase(key)] = item;
  return out;
};

/** 1 to 100 lines, as the API's callers spell them (camelCase in GraphQL, snake_case in REST). */
export const lines = z
  .array(z.preprocess(snakeKeys, line), { error: 'Expected a list of lines' })
  .min(1, 'Must have 1 to 100 lines')
  .max(100, 'Must have 1 to 100 lines')
  .transform((list) => list.map((l): LineInput => ({ description: l.description, quantity: l.quantity, unitPrice: l.unit_price, discountPercent: l.discount_percent, taxRate: l.tax_rate })));

type Issue = { path: (string | number)[]; message: string };

/** The lines priced once per request: the form's bound on the total and the write both need them. */
const pricedOnce = new WeakMap<LineInput[], { currency: string; priced: ReturnType<typeof priceLines> }>();
function priced(lines: LineInput[], currency: string): ReturnType<typeof priceLines> {
  const known = pricedOnce.get(lines);
  if (known?.currency === currency) return known.priced;
  const fresh = priceLines(lines, currency);
  pricedOnce.set(lines, { currency, priced: fresh });
  return fresh;
}
export type MoneyInput = { currency: string; amount?: number | null; lines?: LineInput[] | null };
export type Priced = { currency: string; amount: string; lines: PricedLine[] } & Totals;

/**
 * What the currency makes wrong in an invoice's money: amounts with more decimals than it has,
 * both `amount` and `lines` or neither, a total over the bound. Every problem, keyed by REST name.
 * `only`: the problems of the shape alone (amount or lines), or of the currency alone (decimals, the
 * bound), for a create whose currency is the account's, read later (docs/decisions.md §26).
 */
export function moneyProblems({ currency, amount, lines }: MoneyInput, only?: 'shape' | 'currency'): Issue[] {
  const exponent = exponentOf(currency);
  const issues: Issue[] = [];
  const tooPrecise = `Must have at most ${exponent} decimals in ${currency}`;
  if (only !== 'currency' && amount != null && lines != null) issues.push({ path: ['amount'], message: 'Give amount or lines, not both' });
  if (only !== 'currency' && amount == null && lines == null) issues.push({ path: ['amount'], message: 'Required (or lines)' });
  if (only === 'shape') return issues;
  if (amount != null && decimalsOf(amount) > exponent) issues.push({ path: ['amount'], message: tooPrecise });
  // Read loosely: a zod refinement sees lines whose own checks failed (snake_case, untransformed,
  // or not even objects: `[1]`, `[null]`, which their own checks name).
  const loose = (lines ?? []).map((l) => (l !== null && typeof l === 'object' ? l : {}) as Partial<LineInput> & { unit_price?: unknown });
  const prices = loose.map((l) => l.unitPrice ?? l.unit_price);
  prices.forEach((price, index) => {
    if (typeof price === 'number' && decimalsOf(price) > exponent) issues.push({ path: ['lines', index, 'unit_price'], message: tooPrecise });
  });
  const wellFormed = loose.every((l) => [l.quantity, l.unitPrice, l.discountPercent, l.taxRate].every((n) => typeof n === 'number' && Number.isFinite(n)));
  if (issues.length === 0 && amount == null && lines && wellFormed && priced(lines, currency).totalMinor > scaled(MAX_MONEY, exponent)) {
    issues.push({ path: ['lines'], message: `The total must be at most ${formatMinor(scaled(MAX_MONEY, exponent), exponent)}` });
  }
  return issues;
}

/** The invoice's stored money: lines priced and totals, or `amount` alone (subtotal = total = amount). */
export function priceInvoice(input: MoneyInput): Priced {
  const { currency } = input;
  if (input.lines) {
    const { lines: pricedLines, totals } = priced(input.lines, currency);
    return { currency, amount: totals.total, lines: pricedLines, ...totals };
  }
  const exponent = exponentOf(currency);
  const total = formatMinor(scaled(input.amount ?? 0, exponent), exponent);
  return { currency, amount: total, lines: [], subtotal: total, discountTotal: formatMinor(0n, exponent), taxTotal: formatMinor(0n, exponent), total };
}

/** Problems by field, as a 400's details name them (`lines.1.unit_price`). */
export function detailsOf(issues: Issue[]): ErrorDetails {
  const details: ErrorDetails = {};
  for (const issue of issues) (details[issue.path.join('.')] ??= []).push(issue.message);
  return details;
}
