import { describe, expect, test } from 'vitest';
import { decimalsOf, exponentOf, formatMinor, isCurrency, priceLines, scaled } from '../../src/invoices/money.js';

const line = (quantity: number, unitPrice: number, more: { discountPercent?: number; taxRate?: number } = {}) => ({
  description: 'x',
  quantity,
  unitPrice,
  discountPercent: more.discountPercent ?? 0,
  taxRate: more.taxRate ?? 0,
});

describe('exact money (docs/decisions.md §20)', () => {
  test('3 × 0.10 is exactly 0.30', () => {
    expect(priceLines([line(3, 0.1)], 'USD').totals).toEqual({ subtotal: '0.30', discountTotal: '0.00', taxTotal: '0.00', total: '0.30' });
  });

  test('19.99 at 7.25 % tax is 1.45 (1.449275 rounded half up)', () => {
    const { lines, totals } = priceLines([line(1, 19.99, { taxRate: 7.25 })], 'USD');
    expect(lines[0]).toMatchObject({ amount: '19.99', tax: '1.45' });
    expect(totals.total).toBe('21.44');
  });

  test('a discount is rounded half up and comes off before tax', () => {
    // gross 10.05; discount 15 % = 1.5075 -> 1.51; amount 8.54; tax 10 % = 0.854 -> 0.85
    const { lines, totals } = priceLines([line(1, 10.05, { discountPercent: 15, taxRate: 10 })], 'EUR');
    expect(lines[0]).toMatchObject({ amount: '8.54', tax: '0.85' });
    expect(totals).toEqual({ subtotal: '10.05', discountTotal: '1.51', taxTotal: '0.85', total: '9.39' });
  });

  test('JPY has no minor units: 3 × 333 at 10 % is 999 + 100', () => {
    expect(priceLines([line(3, 333, { taxRate: 10 })], 'JPY').totals).toEqual({ subtotal: '999', discountTotal: '0', taxTotal: '100', total: '1099' });
  });

  test('KWD has three: 2.5 × 1.235 is 3.088 (3.0875 half up)', () => {
    expect(priceLines([line(2.5, 1.235)], 'KWD').totals.total).toBe('3.088');
  });

  test('quantities with four decimals and sums of many lines stay exact', () => {
    const many = Array.from({ length: 100 }, () => line(0.0001, 9_999_999.99));
    // each line: 999.999999 -> 1000.00
    expect(priceLines(many, 'USD').totals.total).toBe('100000.00');
  });

  test('currencies: ISO 4217 codes and their exponents', () => {
    expect([exponentOf('USD'), exponentOf('EUR'), exponentOf('JPY'), exponentOf('KWD'), exponentOf('BHD')]).toEqual([2, 2, 0, 3, 3]);
    expect([isCurrency('USD'), isCurrency('XYZ'), isCurrency('usd')]).toEqual([true, false, false]);
  });

  test('decimal text of numbers, without floats', () => {
    expect([decimalsOf(19.99), decimalsOf(100), decimalsOf(1e-7), decimalsOf(1.5e21)]).toEqual([2, 0, 7, 0]);
    expect([scaled(0.1, 2), scaled(19.99, 2), scaled(1e-7, 7), scaled(12, 3)]).toEqual([10n, 1999n, 1n, 12000n]);
    expect([formatMinor(5n, 2), formatMinor(0n, 3), formatMinor(1500n, 0), formatMinor(-1250n, 2)]).toEqual(['0.05', '0.000', '1500', '-12.50']);
  });

  test('numbers read without text give what their shortest decimal text gives, at every size money has', () => {
    // The reference: the digits of String(value), as every amount was read before the arithmetic of numbers.
    const byText = (value: number, scale: number) => {
      const [mantissa = '0', exp = '0'] = String(value).toLowerCase().split('e');
      const [whole = '0', fraction = ''] = mantissa.split('.');
      const shift = scale + Number(exp) - fraction.length;
      const digits = BigInt(`${whole}${fraction}`);
      return shift >= 0 ? digits * 10n ** BigInt(shift) : digits / 10n ** BigInt(-shift);
    };
    const decimalsByText = (value: number) => {
      const [mantissa = '', exp = '0'] = String(value).toLowerCase().split('e');
      return Math.max(0, (mantissa.split('.')[1] ?? '').length - Number(exp));
    };
    let seed = 52;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const values = [0, -0, 0.1, 0.3, 0.1 + 0.2, 19.99, 9_999_999_999.99, 1_000_000, 0.0001, 1e-7, 1.5e21, 2 ** 53, 123456.12345];
    for (let i = 0; i < 20_000; i++) {
      const decimals = Math.floor(random() * 7);
      const magnitude = 10 ** Math.floor(random() * 13);
      values.push(Number((random() * magnitude).toFixed(decimals)), Number((random() * magnitude).toFixed(decimals)) * -1);
    }
    for (const value of values) {
      expect(decimalsOf(value), String(value)).toBe(decimalsByText(value));
      for (const scale of [0, 2, 3, 4]) expect(scaled(value, scale), `${value} at ${scale}`).toBe(byText(value, scale));
    }
  });
});
