import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';
import { freePort } from './ports';

export { freePort };

/**
 * The test run's database: TEST_DATABASE_URL when given, else one embedded PostgreSQL started for the
 * whole run (fsync off, fresh data dir). Every spec works in fresh random tenants, so files share it.
 * Migrations run when the first app boots (under an advisory lock).
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.TEST_DATABASE_URL) return;
  const dir = mkdtempSync(join(tmpdir(), 'inventory-test-pg-'));
  const db = await startEmbeddedPostgres({ dir, port: await freePort(), database: 'inventory_test', fast: true });
  process.env.TEST_DATABASE_URL = db.url;
  process.env.TEST_EMBEDDED_PG_DIR = dir;
  (globalThis as { __embeddedPg?: typeof db }).__embeddedPg = db;
  writeFileSync(join(dir, 'url.txt'), db.url);
}
