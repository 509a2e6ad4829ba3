import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';
import { freePort, onFreePort, portTaken } from './ports';

export { freePort };

/**
 * The test run's database: TEST_DATABASE_URL when given, else one embedded PostgreSQL started for the
 * whole run (fsync off, fresh data dir). Every spec works in fresh random tenants, so files share it.
 * Migrations run when the first app boots (under an advisory lock).
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.TEST_DATABASE_URL) return;
  // PostgreSQL must be given its port up front: a probed one, and another (in a fresh data directory)
  // should something take it before PostgreSQL binds it.
  let dir = '';
  const db = await onFreePort(async (port) => {
    dir = mkdtempSync(join(tmpdir(), 'inventory-test-pg-'));
    const log: string[] = [];
    try {
      return await startEmbeddedPostgres({ dir, port, database: 'inventory_test', fast: true, onLog: (line) => log.push(String(line)) });
    } catch (err) {
      // PostgreSQL's own "could not bind ... Address already in use" is in its log, not in the error.
      if (portTaken(log.join('\n'))) throw Object.assign(new Error(`port ${port} was taken: ${String(err)}`), { code: 'EADDRINUSE' });
      throw err;
    }
  });
  process.env.TEST_DATABASE_URL = db.url;
  process.env.TEST_EMBEDDED_PG_DIR = dir;
  (globalThis as { __embeddedPg?: typeof db }).__embeddedPg = db;
  writeFileSync(join(dir, 'url.txt'), db.url);
}
