// Prisma names fields in camelCase and maps each to its column in snake_case (schema.prisma's
// convention); REST spells fields as the columns. One definition of each direction.
export const snakeCase = (name: string): string => snake.get(name) ?? remember(snake, name, name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
export const camelCase = (name: string): string => camel.get(name) ?? remember(camel, name, name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()));

// Every request renames the same few hundred field names, each by a regular expression (about 50 µs
// of a create's CPU; BENCHMARKS.md "Writes as fast as reads"): each name is worked out once. Bounded,
// for a client's body may name anything (an unknown key is renamed to be refused by its REST name).
const NAMES_KEPT = 5_000;
const snake = new Map<string, string>();
const camel = new Map<string, string>();
function remember(names: Map<string, string>, name: string, renamed: string): string {
  if (names.size >= NAMES_KEPT) names.clear();
  names.set(name, renamed);
  return renamed;
}
