import { z } from 'zod';
import { builder } from '../graphql/builder.js';
import { PageInfo } from '../graphql/connection.js';
import { uuid } from '../validation.js';

// A minimal keyset connection for the newest-first lists of events and deliveries (forward only:
// first/after), sharing PageInfo with src/graphql/connection.ts. Folding them into its
// defineCollection (which adds last/before and totalCount) is left for later.

/** Position in a newest-first list: the row's time and id (ties broken by id). */
export type Position = { at: Date; id: string };

export const encodeCursor = ({ at, id }: Position): string => Buffer.from(JSON.stringify([at.toISOString(), id])).toString('base64url');

const cursor = z.string().transform((value, ctx): Position => {
  try {
    const [at, id] = JSON.parse(Buffer.from(value, 'base64url').toString()) as [string, string];
    const date = new Date(at);
    if (Number.isNaN(date.getTime()) || !uuid.safeParse(id).success) throw new Error();
    return { at: date, id };
  } catch {
    ctx.addIssue({ code: 'custom', message: 'Not a cursor from this list' });
    return z.NEVER;
  }
});

export const connectionArgs = z.object({
  first: z.number().int('Must be an integer').min(1, 'Must be from 1 to 100').max(100, 'Must be from 1 to 100').nullish().transform((v) => v ?? 25),
  after: cursor.nullish(),
});
export type ConnectionArgs = z.output<typeof connectionArgs>;

/** Rows strictly after `after` in (time desc, id desc) order, for a Prisma `where`. */
export const afterWhere = (field: string, after: Position | null | undefined) =>
  after ? { OR: [{ [field]: { lt: after.at } }, { [field]: after.at, id: { lt: after.id } }] } : {};

export type Connection<T> = { edges: { cursor: string; node: T }[]; nodes: T[]; pageInfo: typeof PageInfo.$inferType };

/** `rows` fetched with `take: first + 1`: the extra row only says there is a next page. */
export function toConnection<T>(rows: T[], first: number, position: (row: T) => Position, after?: Position | null): Connection<T> {
  const nodes = rows.slice(0, first);
  const edges = nodes.map((node) => ({ cursor: encodeCursor(position(node)), node }));
  const pageInfo = { hasNextPage: rows.length > first, hasPreviousPage: after != null, startCursor: edges[0]?.cursor ?? null, endCursor: edges.at(-1)?.cursor ?? null };
  return { edges, nodes, pageInfo };
}

/** `<Name>Connection` and `<Name>Edge` types over an object type. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any object type of the schema
export function connectionType<T>(name: string, node: any) {
  const Edge = builder.objectRef<{ cursor: string; node: T }>(`${name}Edge`).implement({
    fields: (t) => ({ cursor: t.exposeString('cursor'), node: t.field({ type: node, resolve: (edge) => edge.node as never }) }),
  });
  return builder.objectRef<Connection<T>>(`${name}Connection`).implement({
    fields: (t) => ({
      edges: t.field({ type: [Edge], resolve: (c) => c.edges }),
      nodes: t.field({ type: [node], resolve: (c) => c.nodes as never }),
      pageInfo: t.field({ type: PageInfo, resolve: (c) => c.pageInfo }),
    }),
  });
}
