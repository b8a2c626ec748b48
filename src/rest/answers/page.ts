import { json } from '../errors.js';
import type { Respond } from './answer.js';

/**
 * A list page as the contract's envelope (docs/decisions.md §3, §18). A page read by cursor has no
 * page number (docs/decisions.md §18): GraphQL's is 1, counted from the cursor.
 */
export const page: Respond<'page'> = ({ data, variables }) => {
  if (variables.cursor != null) delete (data as { page?: number }).page;
  return json(200, data);
};
