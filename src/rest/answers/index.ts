import type { Answer } from '../routes.js';
import type { Respond } from './answer.js';
import { asIs } from './as-is.js';
import { batch } from './batch.js';
import { created } from './created.js';
import { download } from './download.js';
import { list } from './list.js';
import { noContent } from './no-content.js';
import { page } from './page.js';
import { record } from './record.js';

/** Each kind of answer an operation's data becomes; an upload reads its own body and answers in ./upload.ts. */
export const respond: { [Kind in Exclude<Answer['kind'], 'upload'>]: Respond<Kind> } = {
  'as-is': asIs,
  page,
  created,
  record,
  'no-content': noContent,
  list,
  batch,
  download,
};
