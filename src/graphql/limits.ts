// The rate limits of the root fields (docs/decisions.md §7: per user and endpoint, sliding windows),
// each named once, so a field says which budget it spends and the numbers stand on one screen.
// `name`: fields sharing one bucket; without it each field counts on its own.

/** The contract's lists (GET /contacts, /deals, /invoices): 60 a minute per user and field. */
export const LIST_READS = { max: 60, window: '1m', per: 'user' } as const;

/** Reads REST serves beyond the contract (docs/decisions.md §18): by id, the events feed, search, reports, imports, webhook endpoints: 120 a minute per user and field. */
export const READS_BEYOND_CONTRACT = { max: 120, window: '1m', per: 'user' } as const;

/** Each create, update, delete and state change: 30 a minute per user and field. */
export const WRITES = { max: 30, window: '1m', per: 'user' } as const;

/** An owner's settings (webhook endpoints, API keys): 10 a minute per user and field. */
export const SETTINGS = { max: 10, window: '1m', per: 'user' } as const;

/** A note's or task's create, update, delete and state change: 60 a minute per user and field. */
export const ACTIVITY_WRITES = { max: 60, window: '1m', per: 'user' } as const;

/** One bucket for every batch field: 30 batches a minute per user (3,000 records), whichever field or door. */
export const BATCHES = { max: 30, window: '1m', per: 'user', name: 'batches' } as const;

/**
 * docs/decisions.md §17: 20 imports started an hour per account, counted after access. One bucket
 * for admitImport and startImport: an upload runs both under one response key, and is counted once.
 */
export const IMPORT_STARTS = { max: 20, window: '1h', per: 'account', name: 'startImport' } as const;

/** A contacts CSV export: 5 a minute per user. */
export const CONTACT_EXPORTS = { max: 5, window: '1m', per: 'user' } as const;

/** The whole account's export: once an hour per account. */
export const ACCOUNT_EXPORTS = { max: 1, window: '1h', per: 'account' } as const;

/** Opening the live events stream (accountEvents): 10 a minute per user. */
export const EVENT_STREAMS = { max: 10, window: '1m', per: 'user' } as const;

/** A public lead form's submission: 5 a minute per client address. */
export const LEAD_SUBMISSIONS = { max: 5, window: '1m', per: 'ip' } as const;

/**
 * The client's invoice page and its PDF, per client address, together (docs/decisions.md §20): a
 * page view and the PDF it links to share one budget.
 */
export const INVOICE_PAGE_VIEWS = { max: 60, window: '1m', per: 'ip', name: 'invoice-page' } as const;
