// Prisma names fields in camelCase and maps each to its column in snake_case (schema.prisma's
// convention); REST spells fields as the columns. One definition of each direction.
export const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
export const camelCase = (name: string): string => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
