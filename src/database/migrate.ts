import { DataSource } from 'typeorm';
import { query, sql } from './sql';

/** Arbitrary constant: the advisory lock that serialises migration runs across processes. */
const MIGRATION_LOCK = 724_310_001;

/** Runs `work` while holding the migration lock (several instances may start together). */
async function withMigrationLock<T>(dataSource: DataSource, work: () => Promise<T>): Promise<T> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await query(runner.manager, sql`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
    return await work();
  } finally {
    await query(runner.manager, sql`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => undefined);
    await runner.release();
  }
}

/** Runs pending migrations, one process at a time. Returns the names of those that ran. */
export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  return withMigrationLock(dataSource, async () => {
    const done = await dataSource.runMigrations({ transaction: 'each' });
    return done.map((m) => m.name);
  });
}

/** Reverts the most recently executed migration. Returns its name, or undefined when none has run. */
export async function revertLastMigration(dataSource: DataSource): Promise<string | undefined> {
  return withMigrationLock(dataSource, async () => {
    const table = dataSource.options.migrationsTableName ?? 'migrations';
    const [exists] = await query(dataSource.manager, sql`SELECT to_regclass(${table}) IS NOT NULL AS "exists"`);
    if (!exists.exists) return undefined;
    const [last] = await dataSource.query(`SELECT name FROM "${table}" ORDER BY id DESC LIMIT 1`);
    if (!last) return undefined;
    await dataSource.undoLastMigration({ transaction: 'each' });
    return last.name as string;
  });
}
