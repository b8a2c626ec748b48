import type { Context, ServerContext } from '../../context.js';
import type { ErrorDetails } from '../../errors.js';
import type { Response } from '../../http/response.js';
import type { Logger } from '../../logger.js';
import type { Answer } from '../routes.js';

/** What an answer is made of: the operation's data (its enums as REST shows them) and the request it answers. */
export type Answering<Kind extends Answer['kind'] = Answer['kind']> = {
  data: unknown;
  answer: Extract<Answer, { kind: Kind }>;
  variables: Record<string, unknown>;
  /** A batch's records the REST reader refused, by index (docs/decisions.md §16). */
  refusedItems: Map<number, ErrorDetails>;
  ctx: Context;
  request: Request;
  serverContext: ServerContext;
  log: Logger;
};

/** One kind of answer (src/rest/routes.ts `Answer`): the operation's data as the contract shows it. */
export type Respond<Kind extends Answer['kind']> = (answering: Answering<Kind>) => Response | Promise<Response>;
