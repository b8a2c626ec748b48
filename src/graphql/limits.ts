import type { LimitRule } from '../ratelimit/limiter.js';

export type FieldLimit = LimitRule & { per: 'user' | 'ip' | 'account' };

/**
 * The contract's Limits table, on the GraphQL fields behind each REST endpoint: one limit,
 * whichever door a caller uses. Per user unless noted (decisions.md §7).
 */
export const LIMITS = {
  contacts: { name: 'contacts', max: 60, window: '1m', per: 'user' },
  createContact: { name: 'createContact', max: 30, window: '1m', per: 'user' },
  exportContacts: { name: 'exportContacts', max: 5, window: '1m', per: 'user' },
  deals: { name: 'deals', max: 60, window: '1m', per: 'user' },
  createDeal: { name: 'createDeal', max: 30, window: '1m', per: 'user' },
  invoices: { name: 'invoices', max: 60, window: '1m', per: 'user' },
  submitLeadForm: { name: 'submitLeadForm', max: 5, window: '1m', per: 'ip' },
  exportAccount: { name: 'exportAccount', max: 1, window: '1h', per: 'account' },
} as const satisfies Record<string, FieldLimit>;

export type LimitedField = keyof typeof LIMITS;
