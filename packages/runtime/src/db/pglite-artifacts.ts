import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { PGliteOptions } from '@electric-sql/pglite';

type WasmModule = NonNullable<PGliteOptions['pgliteWasmModule']>;
// The WebAssembly global exists in Node, but this project's type libraries do not declare it.
const { WebAssembly } = globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> } };

export interface PgliteArtifacts {
  pgliteWasmModule: WasmModule;
  initdbWasmModule: WasmModule;
  fsBundle: Blob;
  /** Contrib extensions the services' migrations create (identity: pg_trgm, for people search). */
  extensions: NonNullable<PGliteOptions['extensions']>;
}

let loading: Promise<PgliteArtifacts> | undefined;

/**
 * PGlite's WASM binaries and file-system bundle, read and compiled once per process. PGlite would otherwise
 * load them itself through dynamic `import()` of node builtins, which fails inside jest's module sandbox;
 * handing them over also saves recompiling the WASM for every database opened.
 */
export function loadPgliteArtifacts(): Promise<PgliteArtifacts> {
  loading ??= (async () => {
    const dist = dirname(require.resolve('@electric-sql/pglite'));
    const [pglite, initdb, bundle, { pg_trgm }] = await Promise.all([
      readFile(join(dist, 'pglite.wasm')),
      readFile(join(dist, 'initdb.wasm')),
      readFile(join(dist, 'pglite.data')),
      // Published as ES modules only as far as TypeScript can see, so loaded with import() from this CommonJS file.
      import('@electric-sql/pglite/contrib/pg_trgm'),
    ]);
    const [pgliteWasmModule, initdbWasmModule] = await Promise.all([WebAssembly.compile(pglite), WebAssembly.compile(initdb)]);
    return { pgliteWasmModule, initdbWasmModule, fsBundle: new Blob([bundle]), extensions: { pg_trgm } };
  })().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}
