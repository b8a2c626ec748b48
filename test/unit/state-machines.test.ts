import { describe, expect, test } from 'vitest';
import { AppError } from '../../src/errors.js';
import { DealStatus, InvoiceStatus } from '../../src/generated/prisma/enums.js';
import {
  assertTransition,
  canTransition,
  DEAL_MACHINE,
  DEAL_TRANSITIONS,
  INVOICE_MACHINE,
  INVOICE_TRANSITIONS,
  isFinal,
} from '../../src/state-machines.js';

const DEAL_ALLOWED: [DealStatus, DealStatus][] = [
  ['open', 'won'],
  ['open', 'lost'],
  ['open', 'abandoned'],
  ['won', 'open'],
  ['lost', 'open'],
  ['abandoned', 'open'],
];

const INVOICE_ALLOWED: [InvoiceStatus, InvoiceStatus][] = [
  ['draft', 'sent'],
  ['draft', 'cancelled'],
  ['sent', 'viewed'],
  ['sent', 'partial'],
  ['sent', 'paid'],
  ['sent', 'overdue'],
  ['sent', 'cancelled'],
  ['viewed', 'partial'],
  ['viewed', 'paid'],
  ['viewed', 'overdue'],
  ['viewed', 'cancelled'],
  ['partial', 'paid'],
  ['partial', 'overdue'],
  ['partial', 'refunded'],
  ['overdue', 'partial'],
  ['overdue', 'paid'],
  ['overdue', 'cancelled'],
  ['paid', 'refunded'],
];

const pairs = <S extends string>(states: S[]): [S, S][] => states.flatMap((from) => states.map((to): [S, S] => [from, to]));
const key = ([from, to]: [string, string]) => `${from}->${to}`;

function refusal(run: () => void): AppError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('expected a refusal');
}

describe('deal state machine (docs/decisions.md §8)', () => {
  test.each(DEAL_ALLOWED)('a deal may move from %s to %s', (from, to) => {
    expect(canTransition(DEAL_TRANSITIONS, from, to)).toBe(true);
    expect(() => assertTransition(DEAL_MACHINE, from, to)).not.toThrow();
  });

  test('every move not in the decision is refused, same-state moves included', () => {
    const allowed = new Set(DEAL_ALLOWED.map(key));
    const refused = pairs(Object.values(DealStatus)).filter((pair) => !allowed.has(key(pair)));
    expect(refused).toHaveLength(16 - DEAL_ALLOWED.length);
    for (const [from, to] of refused) expect(canTransition(DEAL_TRANSITIONS, from, to), `${from}->${to}`).toBe(false);
  });

  test.each([
    ['won', 'lost'],
    ['lost', 'abandoned'],
    ['abandoned', 'won'],
    ['open', 'open'],
    ['won', 'won'],
  ] as [DealStatus, DealStatus][])('moving a deal from %s to %s is INVALID_TRANSITION', (from, to) => {
    const error = refusal(() => assertTransition(DEAL_MACHINE, from, to));
    expect(error.code).toBe('INVALID_TRANSITION');
    expect(error.message).toBe(`Cannot move a deal from ${from} to ${to}`);
    expect(error.extensions).toMatchObject({ code: 'INVALID_TRANSITION', from, to });
  });

  test('no deal state is final', () => {
    for (const state of Object.values(DealStatus)) expect(isFinal(DEAL_TRANSITIONS, state)).toBe(false);
  });
});

describe('invoice state machine (docs/decisions.md §8)', () => {
  test.each(INVOICE_ALLOWED)('an invoice may move from %s to %s', (from, to) => {
    expect(canTransition(INVOICE_TRANSITIONS, from, to)).toBe(true);
    expect(() => assertTransition(INVOICE_MACHINE, from, to)).not.toThrow();
  });

  test('every move not in the decision is refused, same-state moves included', () => {
    const allowed = new Set(INVOICE_ALLOWED.map(key));
    const refused = pairs(Object.values(InvoiceStatus)).filter((pair) => !allowed.has(key(pair)));
    expect(refused).toHaveLength(64 - INVOICE_ALLOWED.length);
    for (const [from, to] of refused) expect(canTransition(INVOICE_TRANSITIONS, from, to), `${from}->${to}`).toBe(false);
  });

  test('cancelled and refunded are final and the only final states', () => {
    const finals = Object.values(InvoiceStatus).filter((state) => isFinal(INVOICE_TRANSITIONS, state));
    expect(finals.sort()).toEqual(['cancelled', 'refunded']);
  });

  test.each([
    ['cancelled', 'draft'],
    ['cancelled', 'sent'],
    ['refunded', 'paid'],
    ['refunded', 'draft'],
    ['paid', 'sent'],
    ['paid', 'cancelled'],
    ['draft', 'paid'],
    ['draft', 'viewed'],
    ['viewed', 'sent'],
    ['partial', 'cancelled'],
    ['overdue', 'refunded'],
    ['draft', 'draft'],
    ['paid', 'paid'],
    ['cancelled', 'cancelled'],
  ] as [InvoiceStatus, InvoiceStatus][])('moving an invoice from %s to %s is INVALID_TRANSITION', (from, to) => {
    const error = refusal(() => assertTransition(INVOICE_MACHINE, from, to));
    expect(error.code).toBe('INVALID_TRANSITION');
    expect(error.message).toBe(`Cannot move an invoice from ${from} to ${to}`);
  });

  test('every table names every state, and only known states as targets', () => {
    for (const [table, states] of [
      [DEAL_TRANSITIONS, Object.values(DealStatus)],
      [INVOICE_TRANSITIONS, Object.values(InvoiceStatus)],
    ] as [Record<string, readonly string[]>, string[]][]) {
      expect(Object.keys(table).sort()).toEqual([...states].sort());
      for (const targets of Object.values(table)) for (const to of targets) expect(states).toContain(to);
    }
  });
});
