// Who points at a record (docs/fields.md#who-points-at-a-record): read from Prisma's datamodel, the
// one place a foreign key is declared, so a table that gains a link to contacts, deals or companies
// is unlinked, released or merged by every path that lets a record go, without an edit there. In
// db/, not links/: the set-based deletes (src/writes/) read it too, and they stand below the domains.
import { fieldsOf, modelNames, type ModelField } from './datamodel.js';
import { snakeCase } from '../names.js';

/** The records others point at by an account-scoped link (`[accountId, <field>]`). */
export type Referenced = 'Contact' | 'Deal' | 'Company';

/**
 * What becomes of a row pointing at a record that goes: `unlink` (the link cleared, the row stays),
 * `release` (notes and tasks, docs/decisions.md §21: a note about it alone goes, other notes and
 * tasks keep their other targets), `cascade` (a cache the database removes with it).
 */
export type OnGone = 'unlink' | 'release' | 'cascade';

export type Reference = {
  /** The pointing model, its table, and its field and column holding the id. */
  model: string;
  table: string;
  field: string;
  column: string;
  /** Its row carries updated_at (its ETag, where a sync resumes): clearing the link moves it. */
  stamped: boolean;
  onGone: OnGone;
};

// Not derivable from the datamodel Pothos generates (it carries no `onDelete`): the two kinds of
// rows that are not simply unlinked. Every other reference is.
const ON_GONE: Record<string, OnGone> = { Note: 'release', Task: 'release', InvoicePdf: 'cascade' };

type Relation = ModelField & { relationFromFields?: readonly string[]; isUpdatedAt?: boolean };

/** A model's table as schema.prisma maps them all: snake_case, plural (test/db/references.test.ts holds it to the database's foreign keys). */
export const tableOf = (model: string): string => snakeCase(model.charAt(0).toLowerCase() + model.slice(1)).replace(/y$/, 'ie') + 's';

const cache = new Map<Referenced, readonly Reference[]>();

/** Every row kind that may point at a `target`, in datamodel order. */
export function referencesTo(target: Referenced): readonly Reference[] {
  let found = cache.get(target);
  if (found) return found;
  found = modelNames().flatMap((model) => {
    const fields = fieldsOf(model) as readonly Relation[];
    const stamped = fields.some((f) => f.isUpdatedAt);
    return fields
      .filter((f) => f.kind === 'object' && f.type === target && f.relationFromFields?.length === 2 && f.relationFromFields[0] === 'accountId')
      .map((f) => {
        const field = f.relationFromFields![1]!;
        return { model, table: tableOf(model), field, column: snakeCase(field), stamped, onGone: ON_GONE[model] ?? 'unlink' };
      });
  });
  cache.set(target, found);
  return found;
}
