// Types for scripts/build-if-stale.mjs (plain JavaScript so it runs before anything is compiled).
export declare const SOURCES: string[];
export declare const SKIPPED: Set<string>;
export declare const STAMP: string;
export declare const FIRST_BUILD_TIME: string;
export declare function sourceFiles(root: string, source: string): Array<[file: string, mtimeMs: number]>;
export declare function readStamp(root: string): { builtAt: number; files: string[]; seconds: number | null } | null;
export declare function staleReason(root: string): string | null;
export declare function build(root: string): number;
export declare function banner(reason: string, lastSeconds: number | null | undefined): string;
