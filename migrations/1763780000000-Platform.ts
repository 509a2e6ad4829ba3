import { MigrationInterface, QueryRunner } from 'typeorm';
import { APP_ROLE, tenantPolicy } from './lib/rls';

/** The RLS-bound application role, tenants, document numbering, idempotency keys, UOMs, stock statuses. */
export class Platform1763780000000 implements MigrationInterface {
  name = 'Platform1763780000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      DO $$ BEGIN
        CREATE ROLE ${APP_ROLE} NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOINHERIT;
      -- unique_violation: another database of the cluster created it at the same moment (roles are
      -- cluster-wide; the migrations' advisory lock is per database)
      EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
      END $$;`);
    // The connecting (migration) user may switch to the role per transaction.
    await q.query(`GRANT ${APP_ROLE} TO CURRENT_USER`);
    await q.query(`GRANT USAGE ON SCHEMA public TO ${APP_ROLE}`);
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);

    await q.query(`
      CREATE TABLE tenants (
        tenant_id uuid PRIMARY KEY,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      );
      ${tenantPolicy('tenants', 'SELECT, INSERT')}

      CREATE TABLE document_sequences (
        tenant_id uuid NOT NULL REFERENCES tenants (tenant_id),
        prefix text NOT NULL,
        last_value bigint NOT NULL,
        PRIMARY KEY (tenant_id, prefix)
      );
      ${tenantPolicy('document_sequences', 'SELECT, INSERT, UPDATE')}

      CREATE TABLE idempotency_keys (
        tenant_id uuid NOT NULL REFERENCES tenants (tenant_id),
        key text NOT NULL,
        request_hash text NOT NULL,
        status_code integer,
        response jsonb,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, key)
      );
      CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);
      ${tenantPolicy('idempotency_keys')}

      CREATE TABLE uoms (
        tenant_id uuid NOT NULL REFERENCES tenants (tenant_id),
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        code text NOT NULL,
        name text NOT NULL,
        decimals smallint NOT NULL CHECK (decimals BETWEEN 0 AND 6),
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, code)
      );
      ${tenantPolicy('uoms')}

      CREATE TABLE stock_statuses (
        tenant_id uuid NOT NULL REFERENCES tenants (tenant_id),
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        code text NOT NULL,
        name text NOT NULL,
        is_available boolean NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, code)
      );
      ${tenantPolicy('stock_statuses', 'SELECT, INSERT')}
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE stock_statuses, uoms, idempotency_keys, document_sequences, tenants`);
  }
}
