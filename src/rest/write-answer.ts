// What a REST write answers to a key without the record's read scope (docs/decisions.md §26): the
// core decides which fields (src/graphql/write-answer.ts); REST runs its operation selecting only
// those, so the answer is the record's allowed fields with no error. Selecting them all would make
// each refused non-null field null the whole record, and the written record's id would be lost.
import { getArgumentValues, Kind, type DocumentNode, type FieldNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql/index.js';
import type { Viewer } from '../auth/viewer.js';
import { writeAnswerLimit } from '../graphql/write-answer.js';
import { schema } from '../schema.js';
import type { Operation } from './match.js';

/** The document `operation` runs for `viewer` with `variables`: its own, or one selecting only what the viewer may read of the answer. */
export function answerDocument({ document, operation, field }: Operation, variables: Record<string, unknown>, viewer: Viewer | null): DocumentNode {
  if (operation.operation !== 'mutation' || !viewer?.apiKey) return document;
  const definition = schema.getMutationType()!.getFields()[field]!;
  const root = operation.selectionSet.selections[0] as FieldNode;
  const limit = writeAnswerLimit(definition, getArgumentValues(definition, root, variables), viewer);
  return limit ? narrowed(document, [...limit.fields].sort()) : document;
}

/** Per document, its narrowed copies by the fields they keep: each built once, so compiled execution finds it again. */
const copies = new WeakMap<DocumentNode, Map<string, DocumentNode>>();

function narrowed(document: DocumentNode, fields: string[]): DocumentNode {
  const byFields = copies.get(document) ?? copies.set(document, new Map()).get(document)!;
  const key = fields.join(',');
  const found = byFields.get(key);
  if (found) return found;
  const keep = new Set(fields);
  const fragments = new Map(document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]));
  const definitions = document.definitions.map((definition) => {
    if (definition.kind !== Kind.OPERATION_DEFINITION) return definition;
    const [root, ...others] = definition.selectionSet.selections as FieldNode[];
    const answer = root!.selectionSet && { ...root!.selectionSet, selections: fieldsOf(root!.selectionSet, fragments).filter((f) => keep.has(f.name.value)) };
    return { ...definition, selectionSet: { ...definition.selectionSet, selections: [{ ...root!, selectionSet: answer }, ...others] } };
  });
  const copy: DocumentNode = { ...document, definitions };
  byFields.set(key, copy);
  return copy;
}

/** A selection's fields with its fragments spread in place (a record's fragment names its fields once). */
function fieldsOf(set: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>): FieldNode[] {
  return set.selections.flatMap((selection) => {
    if (selection.kind === Kind.FIELD) return [selection];
    if (selection.kind === Kind.INLINE_FRAGMENT) return fieldsOf(selection.selectionSet, fragments);
    return fieldsOf(fragments.get(selection.name.value)!.selectionSet, fragments);
  });
}
