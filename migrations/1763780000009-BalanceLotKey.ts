import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Balances get `lot_key`: the lot, or the all-zero UUID for stock without a lot, and the unique key
 * `balances_key` becomes (tenant, item, location, lot_key, status). Every look-up of a balance by its
 * key is then five equalities on a unique index, which the planner takes whatever its statistics say
 * (a generic plan on a new database included). With `lot_id IS NOT DISTINCT FROM …` it could use the
 * key only in part and, without statistics, chose `balances_location` instead, reading every balance at
 * the location for each key (a 1,000-line shipment read 41,000 buffers where 1,000 suffice).
 */
export class BalanceLotKey1763780000009 implements MigrationInterface {
  name = 'BalanceLotKey1763780000009';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE balances ADD COLUMN lot_key uuid NOT NULL
        GENERATED ALWAYS AS (coalesce(lot_id, '00000000-0000-0000-0000-000000000000'::uuid)) STORED;
      ALTER TABLE balances DROP CONSTRAINT balances_key;
      ALTER TABLE balances ADD CONSTRAINT balances_key UNIQUE (tenant_id, item_id, location_id, lot_key, status_id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE balances DROP CONSTRAINT balances_key;
      ALTER TABLE balances ADD CONSTRAINT balances_key UNIQUE NULLS NOT DISTINCT (tenant_id, item_id, location_id, lot_id, status_id);
      ALTER TABLE balances DROP COLUMN lot_key;
    `);
  }
}
