import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every index of `balances` that holds the item or the location ends with the whole key (item, location,
 * lot_key, status), so a balance look-up by its key probes all five columns whichever index the planner
 * takes — also for a generic plan built on a table that was never analyzed (issue 26, point 3).
 *
 * Before, without statistics every index estimated one row for a key look-up, and the narrower
 * `balances_location (tenant, location)` (or, with PostgreSQL 18's skip scan, `balances_facility`) won
 * on its lower tree: the look-up then read every balance at the location and filtered item, lot and
 * status. Measured on a never-analyzed table of 10,000 balances (EXPLAIN of the adjustment's generic plan):
 * Index Cond (tenant_id, location_id) before, all five key columns after.
 *
 * - `balances_location`: (tenant, location) → (tenant, location, item, lot_key, status); location-scoped
 *   reads keep their prefix.
 * - `balances_facility`: (tenant, facility, item) → (tenant, facility, item, location, lot_key, status);
 *   the allocation's (item, facility) reads keep their prefix.
 * - `balances_item_facility` (tenant, item, facility) is dropped: its reads are served by
 *   `balances_facility` (the same columns) and by `balances_key`'s (tenant, item) prefix.
 *
 * Balance updates change no indexed column (they stay HOT): the wider indexes cost only when a balance
 * row is created.
 */
export class BalanceKeyIndexes1763780000012 implements MigrationInterface {
  name = 'BalanceKeyIndexes1763780000012';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX balances_item_facility;
      DROP INDEX balances_location;
      CREATE INDEX balances_location ON balances (tenant_id, location_id, item_id, lot_key, status_id);
      DROP INDEX balances_facility;
      CREATE INDEX balances_facility ON balances (tenant_id, facility_id, item_id, location_id, lot_key, status_id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX balances_facility;
      CREATE INDEX balances_facility ON balances (tenant_id, facility_id, item_id);
      DROP INDEX balances_location;
      CREATE INDEX balances_location ON balances (tenant_id, location_id);
      CREATE INDEX balances_item_facility ON balances (tenant_id, item_id, facility_id);
    `);
  }
}
