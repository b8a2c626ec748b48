import { invalidTransition } from './errors.js';
import type { DealStatus, InvoiceStatus } from './generated/prisma/enums.js';

/** Allowed moves per state (docs/decisions.md §8), as data: the docs and the tests read the same table. */
export type TransitionTable<S extends string> = Readonly<Record<S, readonly S[]>>;

export const DEAL_TRANSITIONS: TransitionTable<DealStatus> = {
  open: ['won', 'lost', 'abandoned'],
  won: ['open'],
  lost: ['open'],
  abandoned: ['open'],
};

export const INVOICE_TRANSITIONS: TransitionTable<InvoiceStatus> = {
  draft: ['sent', 'cancelled'],
  sent: ['viewed', 'partial', 'paid', 'overdue', 'cancelled'],
  viewed: ['partial', 'paid', 'overdue', 'cancelled'],
  partial: ['paid', 'overdue', 'refunded'],
  overdue: ['partial', 'paid', 'cancelled'],
  paid: ['refunded'],
  cancelled: [],
  refunded: [],
};

export type Machine<S extends string> = { table: TransitionTable<S>; noun: string };

export const DEAL_MACHINE: Machine<DealStatus> = { table: DEAL_TRANSITIONS, noun: 'a deal' };
export const INVOICE_MACHINE: Machine<InvoiceStatus> = { table: INVOICE_TRANSITIONS, noun: 'an invoice' };

/** Same-state moves are never in a table, so they are refused like any other unlisted move. */
export function canTransition<S extends string>(table: TransitionTable<S>, from: S, to: S): boolean {
  return table[from]?.includes(to) ?? false;
}

/** Throws INVALID_TRANSITION (with `from` and `to` in extensions) unless the move is allowed. */
export function assertTransition<S extends string>(machine: Machine<S>, from: S, to: S): void {
  if (canTransition(machine.table, from, to)) return;
  throw invalidTransition(`Cannot move ${machine.noun} from ${from} to ${to}`, { from, to });
}

/** A state with no way out. */
export const isFinal = <S extends string>(table: TransitionTable<S>, state: S): boolean => table[state].length === 0;
