import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client } from 'pg';
import { testDatabaseUrl } from '../support/app';
import { DIST_DIR } from '../support/dist';

/** `npm run migration:run` / `migration:revert` (dist/database/cli.js) on a database of their own. */
describe('migration CLI', () => {
  const name = `inventory_cli_${randomBytes(4).toString('hex')}`;
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
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [join(DIST_DIR, 'database/cli.js'), ...args], {
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: url.toString() },
      encoding: 'utf8',
      timeout: 60_000,
    });
  const appliedMigrations = async () => {
    const c = new Client({ connectionString: url.toString() });
    await c.connect();
    try {
      const { rows } = await c.query(`SELECT name FROM schema_migrations ORDER BY id`);
      return rows.map((r: { name: string }) => r.name);
    } finally {
      await c.end();
    }
  };

  beforeAll(() => admin(`CREATE DATABASE ${name}`));
  afterAll(() => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));

  it('runs every migration, reverts the last one, and runs it again', async () => {
    const first = cli('run');
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(/migrated: Platform\d+/);
    const applied = await appliedMigrations();
    expect(applied.length).toBeGreaterThanOrEqual(4);

    const again = cli('run');
    expect(again.stdout).toContain('no pending migrations');

    const reverted = cli('revert');
    expect(reverted.status).toBe(0);
    expect(reverted.stdout).toContain(`reverted: ${applied[applied.length - 1]}`);
    expect(await appliedMigrations()).toEqual(applied.slice(0, -1));

    expect(cli('run').stdout).toContain(`migrated: ${applied[applied.length - 1]}`);
    expect(await appliedMigrations()).toEqual(applied);
  });

  it('refuses an unknown command with its usage', () => {
    const res = cli('explode');
    expect(res.status).toBe(1);
    expect(res.stderr).toContain('usage:');
  });
});
