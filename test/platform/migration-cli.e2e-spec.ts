import { Client } from 'pg';
import { scratchDatabase } from '../support/scratch-database';

/** `npm run migration:run` / `migration:revert` (dist/database/cli.js) on a database of their own. */
describe('migration CLI', () => {
  const { url, cli, create, drop } = scratchDatabase('inventory_cli');
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

  beforeAll(create);
  afterAll(drop);

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
