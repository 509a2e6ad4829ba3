import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client } from 'pg';
import { testDatabaseUrl } from './app';
import { DIST_DIR } from './dist';

/**
 * A database of a spec's own on the test run's server (`<prefix>_<random>`): `create()` / `drop()` as the
 * administrator, and `cli(...)` runs the migration CLI (dist/database/cli.js) against it.
 */
export function scratchDatabase(prefix: string) {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const adminUrl = new URL(testDatabaseUrl());
  adminUrl.pathname = '/postgres';
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${name}`;
  const admin = async (sql: string) => {
    const c = new Client({ connectionString: adminUrl.toString() });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  return {
    name,
    url,
    create: () => admin(`CREATE DATABASE ${name}`),
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
    cli: (...args: string[]) =>
      spawnSync(process.execPath, [join(DIST_DIR, 'database/cli.js'), ...args], {
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: url.toString() },
        encoding: 'utf8',
        timeout: 60_000,
      }),
  };
}
