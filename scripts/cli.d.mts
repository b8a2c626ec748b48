// Types for scripts/cli.mjs (plain JavaScript so it runs before anything is compiled).
export declare function cliEntry(root?: string): { from: 'dist'; file: string } | { from: 'tsx'; file: string; reason: string };
