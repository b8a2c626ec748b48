// Loads Prisma's schema engine compiled to WebAssembly. The Prisma CLI would download a native
// engine, and its download host is unreachable here, so migrations run on this build instead.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import * as glue from '@prisma/schema-engine-wasm/schema_engine_bg';
import type { SchemaEngine } from '@prisma/schema-engine-wasm/schema_engine_bg';
import {
  bindMigrationAwareSqlAdapterFactory,
  type SqlMigrationAwareDriverAdapterFactory,
} from '@prisma/driver-adapter-utils';

export type { SchemaEngine };

let loaded: Promise<void> | undefined;

// Our lib settings (no DOM) and @types/node 20 do not declare WebAssembly: type the bit we use.
type WasmApi = {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
};
const Wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

// The package entry does `import * as wasm from "./x.wasm"`, which Node 20 refuses without
// --experimental-wasm-modules; so instantiate the module by hand and hand it to the JS glue.
function loadWasm(): Promise<void> {
  loaded ??= (async () => {
    // Without this registry an engine panic only shows up as "reading 'set_message'".
    const g = globalThis as { PRISMA_WASM_PANIC_REGISTRY?: { set_message(m: string): void } };
    g.PRISMA_WASM_PANIC_REGISTRY ??= {
      set_message(message: string) {
        lastPanic = message;
      },
    };
    const require = createRequire(import.meta.url);
    const glueFile = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
    const bytes = await readFile(path.join(path.dirname(glueFile), 'schema_engine_bg.wasm'));
    const instance = new Wasm.Instance(new Wasm.Module(bytes), { './schema_engine_bg.js': glue });
    glue.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
  })();
  return loaded;
}

/** Set by the engine just before it panics; the panic itself is an opaque "unreachable". */
let lastPanic: string | undefined;

export type EngineHandle = {
  engine: SchemaEngine;
  /** Turns an engine error into the JS error an adapter threw, when there is one. */
  unwrapError(err: unknown): unknown;
  free(): void;
};

/** Starts an engine over a driver adapter factory (see migration-adapters.ts for ours). */
export async function startEngine(factory: SqlMigrationAwareDriverAdapterFactory): Promise<EngineHandle> {
  await loadWasm();
  const bound = bindMigrationAwareSqlAdapterFactory(factory);
  const debug = (message: string) => {
    if (process.env.DEBUG_SCHEMA_ENGINE) console.error('[schema-engine]', message);
  };
  const unwrapError = (err: unknown): unknown => {
    const message = err instanceof Error ? err.message : '';
    // A JS error thrown inside an adapter reaches the engine as "GenericJs" and comes back as
    // "External error id#N"; the registry still holds the original, more useful error.
    const id = /External error id#(\d+)/.exec(message)?.[1];
    const original = id === undefined ? undefined : bound.errorRegistry.consumeError(Number(id))?.error;
    if (original !== undefined) return original;
    if (err instanceof Error && err.name === 'RuntimeError') {
      // A Rust panic leaves the wasm instance unusable: load a fresh one next time.
      loaded = undefined;
      return new Error(`schema engine panicked: ${lastPanic ?? message}`, { cause: err });
    }
    return err;
  };
  let engine: SchemaEngine;
  try {
    // No datamodels: every command we use is given its schema or migrations explicitly.
    engine = await glue.SchemaEngine.new({ datamodels: undefined }, debug, bound);
  } catch (err) {
    throw unwrapError(err);
  }
  const free = () => {
    try {
      engine.free();
    } catch {
      // Only fails after a panic, whose error is the one worth reporting.
    }
  };
  return { engine, unwrapError, free };
}
