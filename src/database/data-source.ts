import { join } from 'node:path';
import { DataSource, DataSourceOptions } from 'typeorm';
import { ENTITIES } from './entities';

/** Migrations live in `<project>/migrations` (compiled to `dist/migrations` for production). */
export function migrationsGlob(): string {
  return __filename.endsWith('.ts')
    ? join(__dirname, '..', '..', 'migrations', '*.ts')
    : join(__dirname, '..', 'migrations', '*.js');
}

/** The connection pool and the limits every connection carries (Settings `DB_*`). */
export interface PoolSettings {
  size: number;
  /** Most connections one tenant's units of work may hold at once (the rest wait, then 503). */
  tenantMaxConnections?: number;
  /** Longest a unit of work may take in the database, whatever its state (then 503, connection dropped). */
  requestTimeoutMs?: number;
  acquireTimeoutMs: number;
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
}

/**
 * The pool of the command-line tools (migrations, ledger:verify) and of a UnitOfWork built without the
 * service's settings: a few connections and the limits' defaults. The service's own pool comes from its
 * settings (DatabaseModule; `DB_POOL_SIZE` defaults to 16, `DB_TENANT_MAX_CONNECTIONS` to one less: README).
 */
export const DEFAULT_POOL: PoolSettings = {
  size: 5, tenantMaxConnections: 4, requestTimeoutMs: 10000, acquireTimeoutMs: 5000, statementTimeoutMs: 8000, lockTimeoutMs: 5000, idleInTransactionTimeoutMs: 10000,
};

/** The pool settings the application runs with (DatabaseModule provides them to UnitOfWork). */
export const POOL_SETTINGS = Symbol('PoolSettings');

export function dataSourceOptions(url: string, pool: PoolSettings = DEFAULT_POOL): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: [migrationsGlob()],
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    poolSize: pool.size,
    extra: {
      max: pool.size,
      // Waiting for a free connection, and connecting: past this the request answers 503.
      connectionTimeoutMillis: pool.acquireTimeoutMs,
      idleTimeoutMillis: 30000,
      application_name: 'inventory-service',
      // Pipelined connections: a statement is sent without waiting for the answers to the ones before it
      // (node-postgres keeps them in order). The unit of work sends its opening statement and its first
      // statement back to back; every other caller awaits each statement as before.
      pipeline: true,
      // Server-side limits, set on every connection (0 = none). Past one the statement fails → 503.
      ...(pool.statementTimeoutMs ? { statement_timeout: pool.statementTimeoutMs } : {}),
      ...(pool.lockTimeoutMs ? { lock_timeout: pool.lockTimeoutMs } : {}),
      ...(pool.idleInTransactionTimeoutMs ? { idle_in_transaction_session_timeout: pool.idleInTransactionTimeoutMs } : {}),
      // A database host that vanishes is noticed by TCP keepalive, not after the kernel's default hours.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10000,
    },
  };
}

/** For command-line tools: no statement or lock limits (a migration may rightly take long). */
export function createDataSource(url: string): DataSource {
  return new DataSource(dataSourceOptions(url, { ...DEFAULT_POOL, statementTimeoutMs: 0, lockTimeoutMs: 0, idleInTransactionTimeoutMs: 0 }));
}
