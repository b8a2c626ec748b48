import { json } from '../errors.js';
import type { Respond } from './answer.js';

/** 201 with `{data: <the created record>}`. */
export const created: Respond<'created'> = ({ data }) => json(201, { data });
