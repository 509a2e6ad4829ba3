import type { DataSource } from 'typeorm';
import { query, sql } from '../database/sql';

/** A round trip to the database on a pooled connection, outside any unit of work (no tenant): it answers or throws. */
export async function ping(dataSource: DataSource): Promise<void> {
  await query(dataSource.manager, sql`SELECT 1`);
}
