import { join, resolve } from 'node:path';

/**
 * Loads a compiled module of the service from dist/ with Node's own require.
 * NestJS 12 packages are ES modules; Node 20 loads them through require(esm), jest's module loader
 * cannot. So e2e specs run the real, compiled service (`npm test` builds it first) in-process,
 * and import only types from src/.
 */
/** Node's own require, handed in by test/support/environment.js (outside jest's module registry). */
export const nativeRequire = (globalThis as unknown as { __nativeRequire: NodeJS.Require }).__nativeRequire;
/** The build output the specs run: dist/ (what `npm test` builds), or TEST_DIST_DIR. */
export const DIST_DIR = process.env.TEST_DIST_DIR ? resolve(process.env.TEST_DIST_DIR) : join(__dirname, '..', '..', 'dist');

export function fromDist<T>(modulePath: string): T {
  return nativeRequire(join(DIST_DIR, `${modulePath}.js`)) as T;
}
