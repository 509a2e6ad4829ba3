import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { Sql } from '../../src/database/sql';
import type { ResolvedLine } from '../../src/inventory/ledger/posting-lines';
import { fromDist, nativeRequire } from '../support/dist';
import { scratchDatabase } from '../support/scratch-database';

// The statement as the service builds it, from the build the specs run (its module loads NestJS, ESM).
const { direct, directBatch } = fromDist<{ direct: (...args: unknown[]) => Sql; directBatch: (...args: unknown[]) => Sql }>('inventory/ledger/direct.sql');
const { directHolds } = fromDist<{ directHolds: (...args: unknown[]) => Sql }>('inventory/ledger/direct-holds.sql');
// node-postgres's own conversion of a parameter to its text form (arrays as PostgreSQL array literals)
const { prepareValue } = nativeRequire('pg/lib/utils') as { prepareValue: (v: unknown) => string | null };
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

  /** Balances of one tenant, never analyzed: 10,000 rows over 1,000 items and 10 locations. */
  async function neverAnalyzed(db: Client) {
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
    const line = () => ({
      item: { id: randomUUID(), version: 1 },
      location: { id: locations[0], version: 1, facilityVersion: 1, facilityId: facility },
      status: { id: status },
    }) as unknown as ResolvedLine;
    return { tenant, line };
  }

  /** The generic plan of `statement` as a pool connection of the service builds it (prepared.ts, planMode). */
  async function genericPlan(db: Client, tenant: string, statement: Sql): Promise<string[]> {
    await db.query('BEGIN');
    try {
      await db.query(`SET LOCAL ROLE ${APP_ROLE}`);
      await db.query(`SELECT set_config('app.tenant_id', $1, true)`, [tenant]);
      await db.query('SET LOCAL plan_cache_mode = force_generic_plan; SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off');
      const name = `plan_${randomUUID().replace(/-/g, '')}`;
      await db.query(`PREPARE ${name} AS ${statement.text}`);
      const literal = (v: unknown) => {
        const text = prepareValue(v);
        return text === null ? 'NULL' : `'${text.replace(/'/g, "''")}'`;
      };
      const { rows } = await db.query(`EXPLAIN (COSTS OFF) EXECUTE ${name}(${statement.values.map(literal).join(', ')})`);
      return rows.map((r: Record<string, string>) => r['QUERY PLAN']);
    } finally {
      await db.query('ROLLBACK');
    }
  }

  /** Every look-up of a balance in `plan`, but by its primary key (an update of a row found before), probes an index with all five key columns. */
  function expectFullKeyProbes(plan: string[]) {
    const lookUps = plan.map((l, i) => [l, plan[i + 1]?.trim() ?? ''] as const).filter(([l, cond]) => /Scan .* on balances b(_\d+)?$/.test(l) && !/\(id = /.test(cond));
    expect(lookUps.length).toBeGreaterThan(0);
    for (const [scan, cond] of lookUps) {
      expect(scan).toMatch(/Index Scan using balances_\w+ on balances b(_\d+)?$/);
      for (const column of ['tenant_id', 'item_id', 'location_id', 'lot_key', 'status_id']) expect(cond).toContain(`(${column} = `);
    }
  }

  /** Every scan of `table` in `plan` probes an index with all of `columns` in its Index Cond (or, for reservations, reads the lapsed ones by expiry). */
  function expectKeyedProbes(plan: string[], table: string, columns: string[]) {
    const scans = plan.map((l, i) => [l, plan[i + 1]?.trim() ?? ''] as const).filter(([l]) => new RegExp(`Scan .* on ${table}( \\w+)?$`).test(l));
    expect(scans.length).toBeGreaterThan(0);
    for (const [scan, cond] of scans) {
      expect(scan).toMatch(/Index Scan using \w+ on /);
      // lapsed holds (few: the expiry job releases them) by the expiry indexes, the tenant's or all tenants'
      if (table === 'reservations' && /using reservations_expiry(_all)? /.test(scan)) expect(cond).toContain('(expires_at <= now())');
      else for (const column of columns) expect(cond).toContain(`(${column} = `);
    }
  }

  it("the adjustment's balance look-up holds all five key columns in its Index Cond", async () => {
    const db = new Client({ connectionString: scratch.url.toString() });
    await db.connect();
    try {
      const { tenant, line } = await neverAnalyzed(db);
      const statement = direct(tenant, line(), '1', { id: randomUUID(), type: 'adjustment', postedBy: 'spec', reason: null, sourceType: null, sourceId: null }, () => ({}));
      expectFullKeyProbes(await genericPlan(db, tenant, statement));
    } finally {
      await db.end();
    }
  });

  it("a batch of adjustments looks each member's balance up by all five key columns too", async () => {
    const db = new Client({ connectionString: scratch.url.toString() });
    await db.connect();
    try {
      const { tenant, line } = await neverAnalyzed(db);
      const members = [1, 2, 3].map(() => ({
        line: line(), qty: '1', lineRow: {}, view: () => ({}),
        head: { id: randomUUID(), type: 'adjustment', postedBy: 'spec', reason: null, sourceType: null, sourceId: null },
      }));
      const plan = await genericPlan(db, tenant, directBatch(tenant, members));
      expectFullKeyProbes(plan);
      // each member's item, location, facility and status by its key; lapsed holds read by expiry, once
      expectKeyedProbes(plan, 'items', ['tenant_id', 'id']);
      expectKeyedProbes(plan, 'locations', ['tenant_id', 'id']);
      expectKeyedProbes(plan, 'facilities', ['tenant_id', 'id']);
      expectKeyedProbes(plan, 'reservations', ['tenant_id', 'item_id', 'facility_id']);
      // and no scan of the tenant's balances anywhere
      expect(plan.filter((l) => /Seq Scan on balances|Bitmap Heap Scan on balances/.test(l))).toEqual([]);
    } finally {
      await db.end();
    }
  });

  it('a batch of new reservations probes each position, item and facility by its key, and reads lapsed holds by expiry', async () => {
    const db = new Client({ connectionString: scratch.url.toString() });
    await db.connect();
    try {
      await db.query(`ALTER TABLE inventory_positions SET (autovacuum_enabled = false); ALTER TABLE reservations SET (autovacuum_enabled = false)`);
      await db.query(`SET session_replication_role = replica`);
      const [tenant, facility] = [randomUUID(), randomUUID()];
      // 10,000 positions and 10,000 open reservations of one tenant, never analyzed
      await db.query(
        `INSERT INTO inventory_positions (tenant_id, item_id, facility_id, qty_available_on_hand)
         SELECT $1, md5('item' || g)::uuid, $2, 1000 FROM generate_series(0, 9999) g`, [tenant, facility]);
      await db.query(
        `INSERT INTO reservations (tenant_id, id, reservation_no, item_id, facility_id, qty, status, expires_at, created_by, updated_by)
         SELECT $1, gen_random_uuid(), 'RS-' || g, md5('item' || g)::uuid, $2, 1, 'open', now() + interval '1 day', 'spec', 'spec' FROM generate_series(0, 9999) g`,
        [tenant, facility]);
      const members = [1, 2, 3].map(() => ({
        id: randomUUID(), itemId: randomUUID(), itemVersion: 1, facilityId: facility, facilityVersion: 1, qty: '1', demandType: 'manual',
        demandId: null, demandLineId: null, expiresAt: null, notes: null, userId: 'spec',
        event: { type: 'reservation.created', action: 'create', subjectType: 'reservation', view: {} },
      }));
      const plan = await genericPlan(db, tenant, directHolds(tenant, members));
      // positions, items and facilities by their keys; lapsed holds read by expiry, once (not the tenant's
      // active reservations, which a probe per member read by tenant alone); and no scan of a tenant's rows
      expectKeyedProbes(plan, 'inventory_positions', ['tenant_id', 'item_id', 'facility_id']);
      expectKeyedProbes(plan, 'items', ['tenant_id', 'id']);
      expectKeyedProbes(plan, 'facilities', ['tenant_id', 'id']);
      expectKeyedProbes(plan, 'reservations', ['tenant_id', 'item_id', 'facility_id']);
      expect(plan.filter((l) => /Seq Scan|Bitmap Heap Scan/.test(l))).toEqual([]);
    } finally {
      await db.end();
    }
  });
});
