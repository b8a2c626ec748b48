import { restCustomFieldName } from './custom-field-params.js';
import { toSnake } from './input.js';
import type { Route } from './routes.js';

/**
 * THE way back from a path the core names (docs/decisions.md §2) to the REST field it came from:
 * GraphQL variables and input fields are camelCase, REST fields snake_case; a body that is the
 * `input` variable names its fields without it, and the input as a whole is the `body`; a batch's
 * records are `records` where the core says `inputs`. Form submissions keep the form's own keys.
 * Every REST 400 renames its details through this alone.
 */
export function restFieldName(route: Pick<Route, 'input' | 'keepDetailKeys'> & Partial<Pick<Route, 'answer'>>, path: string): string {
  if (route.keepDetailKeys) return path;
  // A list's custom-field conditions are named as the query string gave them (cf.<key>.gt, sort).
  const custom = route.input === 'query' ? restCustomFieldName(path) : undefined;
  if (custom !== undefined) return custom;
  const segments = path.split('.');
  if (route.input === 'body-as-input' && segments[0] === 'input') segments.shift();
  if (segments.length === 0) return 'body';
  const name = segments.map(toSnake).join('.');
  if (route.answer?.kind !== 'batch') return name;
  const { argument, records } = route.answer;
  return name === argument || name.startsWith(`${argument}.`) ? records + name.slice(argument.length) : name;
}
