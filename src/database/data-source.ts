import { join } from 'node:path';
import { DataSource, DataSourceOptions } from 'typeorm';
import { ENTITIES } from './entities';

/** Migrations live in `<project>/migrations` (compiled to `dist/migrations` for production). */
export function migrationsGlob(): string {
  return __filename.endsWith('.ts')
    ? join(__dirname, '..', '..', 'migrations', '*.ts')
    : join(__dirname, '..', 'migrations', '*.js');
}

export function dataSourceOptions(url: string, poolSize = 10): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: [migrationsGlob()],
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    poolSize,
    extra: {
      max: poolSize,
      connectionTimeoutMillis: 5000,
      idleTimeoutMillis: 30000,
      application_name: 'inventory-service',
    },
  };
}

export function createDataSource(url: string, poolSize?: number): DataSource {
  return new DataSource(dataSourceOptions(url, poolSize));
}
