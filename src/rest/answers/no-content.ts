import { Response } from '../../http/response.js';
import type { Respond } from './answer.js';

/** 204 with no body. */
export const noContent: Respond<'no-content'> = () => new Response(null, { status: 204 });
