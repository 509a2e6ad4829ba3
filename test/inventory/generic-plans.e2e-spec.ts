import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { Sql } from '../../src/database/sql';
import type { ResolvedLine } from '../../src/inventory/ledger/posting-lines';
import { fromDist } from '../support/dist';
import { scratchDatabase } from '../support/scratch-database';

// The statement as the service builds it, from the build the specs run (its module loads NestJS, ESM).
const { direct } = fromDist<{ direct: (...args: unknown[]) => Sql }>('inventory/ledger/direct.sql');
const { APP_ROLE } = fromDist<{ APP_ROLE: string }>('database/constants');

/**
 * Plans that do not depend on luck (issue 26, point 3): on a freshly migrated database whose `balances`
 * (10,000 rows) were never analyzed, the adjustment statement's generic plan — the plan each pool
 * connection builds the first time — probes a balance by its whole key (tenant, item, location, lot_key,
 * status) in its Index Cond, whichever index it takes. Before, it took `balances_location` by (tenant,
 * location) and filtered the rest, or scanned the tenant's balances by tenant and lot alone.
 */
describe('generic plans on a never-analyzed database', () => {
  const scratch = scratchDatabase('inventory_plans');

  beforeAll(async () => {
    await scratch.create();
    const run = scratch.cli('run');
    if (run.status !== 0) throw new Error(`migrations: ${run.stdout} ${run.stderr}`);
  }, 150_000);
  afterAll(() => scratch.drop());

  it("the adjustment's balance look-up holds all five key columns in its Index Cond", async () => {
    const db = new Client({ connectionString: scratch.url.toString() });
    await db.connect();
    try {
      await db.query(`ALTER TABLE balances SET (autovacuum_enabled = false)`);
      // Rows known to be consistent among themselves; the referenced rows need not exist for a plan.
      await db.query(`SET session_replication_role = replica`);
      const [tenant, facility, status] = [randomUUID(), randomUUID(), randomUUID()];
      const locations = Array.from({ length: 10 }, () => randomUUID());
      await db.query(
        `INSERT INTO balances (tenant_id, item_id, facility_id, location_id, status_id, qty_on_hand)
         SELECT $1, md5('item' || (g / 10))::uuid, $2, ($3::uuid[])[g % 10 + 1], $4, 1000 FROM generate_series(0, 9999) g`,
        [tenant, facility, locations, status],
      );
      const { rows: [stats] } = await db.query(
        `SELECT (SELECT count(*) FROM pg_stats WHERE tablename = 'balances')::int AS columns,
                (SELECT analyze_count + autoanalyze_count FROM pg_stat_user_tables WHERE relname = 'balances')::int AS analyzed`,
      );
      expect(stats).toEqual({ columns: 0, analyzed: 0 });

      const line = {
        item: { id: randomUUID(), version: 1 },
        location: { id: locations[0], version: 1, facilityVersion: 1, facilityId: facility },
        status: { id: status },
      } as unknown as ResolvedLine;
      const statement = direct(tenant, line, '1', { id: randomUUID(), type: 'adjustment', postedBy: 'spec', reason: null, sourceType: null, sourceId: null }, () => ({}));
      await db.query('BEGIN');
      await db.query(`SET LOCAL ROLE ${APP_ROLE}`);
      await db.query(`SELECT set_config('app.tenant_id', $1, true)`, [tenant]);
      await db.query('SET LOCAL plan_cache_mode = force_generic_plan');
      await db.query(`PREPARE adjustment AS ${statement.text}`);
      const literal = (v: unknown) => (v === null ? 'NULL' : `'${String(v).replace(/'/g, "''")}'`);
      const { rows } = await db.query(`EXPLAIN (COSTS OFF) EXECUTE adjustment(${statement.values.map(literal).join(', ')})`);
      await db.query('ROLLBACK');
      const plan: string[] = rows.map((r: Record<string, string>) => r['QUERY PLAN']);
      const at = plan.findIndex((l) => / on balances b$/.test(l));
      expect(plan[at]).toMatch(/Index Scan using balances_\w+ on balances b$/);
      const cond = plan[at + 1].trim();
      for (const column of ['tenant_id', 'item_id', 'location_id', 'lot_key', 'status_id']) expect(cond).toContain(`(${column} = `);
    } finally {
      await db.end();
    }
  });
});
