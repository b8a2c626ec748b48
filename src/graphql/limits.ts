// The rate limits fields share (docs/decisions.md §7: per user and endpoint, sliding windows), named
// once; a limit only one field has stays beside that field.

/** Each create, update, delete and state change: 30 a minute per user and field. */
export const WRITES = { max: 30, window: '1m', per: 'user' } as const;

/** An owner's settings (webhook endpoints, API keys): 10 a minute per user and field. */
export const SETTINGS = { max: 10, window: '1m', per: 'user' } as const;
