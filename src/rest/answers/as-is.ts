import { json } from '../errors.js';
import type { Respond } from './answer.js';

/** 200 with the (aliased) selection itself. */
export const asIs: Respond<'as-is'> = ({ data }) => json(200, data);
