// Exact money (docs/decisions.md §20): every amount is an integer count of its currency's minor
// units (a bigint), read from the shortest decimal text of the number the client sent, so
// 3 × 0.10 is 0.30 and never 0.30000000000000004. No binary float takes part in a sum.

import { isCurrencyCode } from '../validation.js';

/** ISO 4217 exponents other than 2 (ICU's digits differ from ISO for a few, e.g. IQD, so they are listed here). */
const EXPONENTS: Record<string, number> = {
  ...Object.fromEntries(['BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF'].map((c) => [c, 0])),
  ...Object.fromEntries(['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND'].map((c) => [c, 3])),
  CLF: 4,
  UYW: 4,
};

/** The exponents other than 2 as a JSON object, for a statement that judges amounts in a currency it reads itself. */
export const EXPONENTS_JSON = JSON.stringify(EXPONENTS);

/** ISO 4217 codes in use, from the ICU data Node ships (kept current with Node, no table to maintain; src/validation.ts). */
export const isCurrency = isCurrencyCode;
/** What an invoice in `status` still owes, in minor units: nothing once refunded or cancelled (docs/decisions.md §26), else total − paid. */
export const dueMinor = (status: string, totalMinor: bigint, paidMinor: bigint): bigint =>
  status === 'refunded' || status === 'cancelled' ? 0n : totalMinor - paidMinor;
/** The currency's minor units: USD 2, JPY 0, KWD 3. */
export const exponentOf = (currency: string): number => EXPONENTS[currency] ?? 2;

/**
 * Below this, `value × 10^scale` is within 0.5 of its integer whenever `value` has at most `scale`
 * decimals (binary error ≤ 2^-51 of it), so Math.round finds that integer exactly.
 */
const EXACT = 2 ** 50;
const POWERS = Array.from({ length: 23 }, (_, i) => 10 ** i);
const BIG_POWERS = Array.from({ length: 23 }, (_, i) => 10n ** BigInt(i));

/**
 * `value` × 10^scale as an integer when `value` has at most `scale` decimals (its shortest text
 * names the same number as that integer / 10^scale: nothing else rounds to it at this size), else
 * null. The arithmetic of numbers, no text: money's amounts are of this kind almost always.
 */
function exactly(value: number, scale: number): number | null {
  const power = POWERS[scale];
  if (power === undefined) return null;
  const units = Math.round(value * power);
  return Math.abs(units) < EXACT && units / power === value ? units : null;
}

/** How many decimals the number's shortest text has (1e-7 counts 7). */
export function decimalsOf(value: number): number {
  for (let scale = 0; scale <= 4; scale++) if (exactly(value, scale) !== null) return scale;
  const [mantissa = '', exp = '0'] = String(value).toLowerCase().split('e');
  const decimals = (mantissa.split('.')[1] ?? '').length - Number(exp);
  return Math.max(0, decimals);
}

/** `value` × 10^scale as an exact integer; the caller has checked it has at most `scale` decimals (more are cut off). */
export function scaled(value: number, scale: number): bigint {
  const units = exactly(value, scale);
  if (units !== null) return BigInt(units);
  const [mantissa = '0', exp = '0'] = String(value).toLowerCase().split('e');
  const [whole = '0', fraction = ''] = mantissa.split('.');
  const shift = scale + Number(exp) - fraction.length;
  const digits = BigInt(`${whole}${fraction}`);
  const power = (n: number) => BIG_POWERS[n] ?? 10n ** BigInt(n);
  return shift >= 0 ? digits * power(shift) : digits / power(-shift);
}

/** numerator / denominator rounded half up (both ≥ 0). */
const roundHalfUp = (numerator: bigint, denominator: bigint): bigint => (2n * numerator + denominator) / (2n * denominator);

/** Minor units as decimal text with the currency's decimals ("0.30", "1500", "1.234"). */
export function formatMinor(units: bigint, exponent: number): string {
  const sign = units < 0n ? '-' : '';
  const digits = (units < 0n ? -units : units).toString().padStart(exponent + 1, '0');
  return exponent === 0 ? `${sign}${digits}` : `${sign}${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
}

/** Decimal text (a NUMERIC column's) as minor units of a currency with `exponent` decimals. */
export const minorOf = (value: { toString(): string }, exponent: number): bigint => scaled(Number(value.toString()), exponent);

export type LineInput = { description: string; quantity: number; unitPrice: number; discountPercent: number; taxRate: number };
export type PricedLine = LineInput & { position: number; amount: string; tax: string };
export type Totals = { subtotal: string; discountTotal: string; taxTotal: string; total: string };

export const QUANTITY_DECIMALS = 4;
export const RATE_DECIMALS = 3;

/**
 * A line's gross is quantity × unit price, its discount gross × percent / 100, its amount the gross
 * less the discount, its tax amount × rate / 100: each rounded half up to the currency's minor units.
 * The invoice's total is subtotal − discountTotal + taxTotal.
 */
export function priceLines(lines: LineInput[], currency: string): { lines: PricedLine[]; totals: Totals; totalMinor: bigint } {
  const exponent = exponentOf(currency);
  const rateScale = 100n * BIG_POWERS[RATE_DECIMALS]!;
  let subtotal = 0n;
  let discountTotal = 0n;
  let taxTotal = 0n;
  const priced = lines.map((line, position) => {
    const gross = roundHalfUp(scaled(line.quantity, QUANTITY_DECIMALS) * scaled(line.unitPrice, exponent), BIG_POWERS[QUANTITY_DECIMALS]!);
    const discount = roundHalfUp(gross * scaled(line.discountPercent, RATE_DECIMALS), rateScale);
    const amount = gross - discount;
    const tax = roundHalfUp(amount * scaled(line.taxRate, RATE_DECIMALS), rateScale);
    subtotal += gross;
    discountTotal += discount;
    taxTotal += tax;
    return { ...line, position, amount: formatMinor(amount, exponent), tax: formatMinor(tax, exponent) };
  });
  const total = subtotal - discountTotal + taxTotal;
  const totals = { subtotal: formatMinor(subtotal, exponent), discountTotal: formatMinor(discountTotal, exponent), taxTotal: formatMinor(taxTotal, exponent), total: formatMinor(total, exponent) };
  return { lines: priced, totals, totalMinor: total };
}
