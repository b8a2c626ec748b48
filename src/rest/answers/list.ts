import { json } from '../errors.js';
import type { Respond } from './answer.js';

/** 200 with `{data: <the list>}`: a list that is the whole answer (no paging), or a report. */
export const list: Respond<'list'> = ({ data }) => json(200, { data });
