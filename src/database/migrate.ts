import { DataSource } from 'typeorm';

/** Arbitrary constant: the advisory lock that serialises migration runs across processes. */
const MIGRATION_LOCK = 724_310_001;

/** Runs pending migrations, one process at a time (several instances may start together). */
export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const done = await dataSource.runMigrations({ transaction: 'each' });
    return done.map((m) => m.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await runner.release();
  }
}
