// Types for scripts/build-if-stale.mjs (plain JavaScript so it runs before anything is compiled).
export declare const SOURCES: string[];
export declare const STAMP: string;
export declare function newestMtime(target: string): number;
export declare function staleReason(root: string): string | null;
export declare function build(root: string): number;
