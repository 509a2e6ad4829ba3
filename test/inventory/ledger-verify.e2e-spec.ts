import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type * as Verify from '../../src/inventory/ledger/verify.sql';
import { newTenant, startApp, TestContext } from '../support/app';
import { DIST_DIR, fromDist } from '../support/dist';
import { adjust, inventoryFixture, reservationIn, salesOrderIn } from '../support/fixtures';
import { scratchDatabase } from '../support/scratch-database';

const { verifyLedger, INVARIANT_CHECKS } = fromDist<typeof Verify>('inventory/ledger/verify.sql');

/**
 * `npm run ledger:verify` finds drift by SQL, names the rows, and exits non-zero. On a database of its own:
 * the drift cases drop CHECK constraints inside their transaction, and the ACCESS EXCLUSIVE lock that takes
 * would wait for (and hold up) every other spec's use of those tables on the shared test database — until
 * its lock_timeout, in a busy run.
 */
describe('ledger:verify', () => {
  const scratch = scratchDatabase('ledger_verify');
  let ctx: TestContext;
  beforeAll(async () => {
    await scratch.create();
    const run = scratch.cli('run');
    if (run.status !== 0) throw new Error(`migrations: ${run.stdout} ${run.stderr}`);
    ctx = await startApp({}, scratch.url.toString());
  }, 150_000);
  afterAll(async () => {
    await ctx?.close();
    await scratch.drop();
  });

  const verify = (tenantId: string) =>
    spawnSync(process.execPath, [join(DIST_DIR, 'inventory/ledger/verify-cli.js'), '--tenant', tenantId], {
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: scratch.url.toString() },
      encoding: 'utf8',
      timeout: 30_000,
    });

  it('passes on a consistent ledger and fails, naming the rows, on drift', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5 });
    await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 2 }).expect(201);

    const clean = verify(t.tenantId);
    expect(clean.stdout).toContain('ledger consistent');
    expect(clean.status).toBe(0);

    // Drift a balance away from its ledger lines (as the superuser, below the service).
    await ctx.db.query(`UPDATE balances SET qty_on_hand = qty_on_hand + 1 WHERE tenant_id = $1`, [t.tenantId]);
    const drifted = verify(t.tenantId);
    expect(drifted.status).toBe(1);
    expect(drifted.stdout).toMatch(/FAIL balance_equals_ledger/);
    expect(drifted.stdout).toContain(f.item.id);
    expect(drifted.stdout).toMatch(/FAIL position_matches_balances_and_holds/);

    await ctx.db.query(`UPDATE balances SET qty_on_hand = qty_on_hand - 1 WHERE tenant_id = $1`, [t.tenantId]);
    await ctx.db.query(`UPDATE inventory_positions SET qty_reserved = qty_reserved + 1 WHERE tenant_id = $1`, [t.tenantId]);
    const reserved = verify(t.tenantId);
    expect(reserved.status).toBe(1);
    expect(reserved.stdout).not.toMatch(/FAIL balance_equals_ledger/);
    expect(reserved.stdout).toMatch(/FAIL position_matches_balances_and_holds/);

    await ctx.db.query(`UPDATE inventory_positions SET qty_reserved = qty_reserved - 1 WHERE tenant_id = $1`, [t.tenantId]);
    expect(verify(t.tenantId).status).toBe(0);

    // The TX counter is the unfiltered transactions list's count: it must equal the transactions.
    expect((await t.get('/v1/inventory/transactions').expect(200)).body.count).toBe(1);
    await ctx.db.query(`UPDATE document_sequences SET last_value = last_value + 1 WHERE tenant_id = $1 AND prefix = 'TX'`, [t.tenantId]);
    const counter = verify(t.tenantId);
    expect(counter.status).toBe(1);
    expect(counter.stdout).toMatch(/FAIL transactions_match_tx_counter/);
    await ctx.db.query(`UPDATE document_sequences SET last_value = last_value - 1 WHERE tenant_id = $1 AND prefix = 'TX'`, [t.tenantId]);
    expect(verify(t.tenantId).status).toBe(0);
  });

  it('reports a move whose lines do not net to zero per item, facility and lot', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5 });
    const moved = (await t.post('/v1/inventory/moves', { lines: [{ itemId: f.item.id, fromLocationId: f.location.id, toLocationId: f.locations[1].id, qty: 2 }] }).expect(201)).body.data;
    expect(verify(t.tenantId).status).toBe(0);

    // A third line slipped into the move (as the superuser, below the service), its balance drifted with
    // it so that only the move's own check sees it; rolled back afterwards (the ledger is append-only).
    const runner = ctx.db.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    try {
      await runner.query(
        `INSERT INTO ledger_lines (tenant_id, transaction_id, line_no, item_id, facility_id, location_id, lot_id, status_id, qty_delta)
         SELECT tenant_id, transaction_id, 3, item_id, facility_id, location_id, lot_id, status_id, 1 FROM ledger_lines
          WHERE tenant_id = $1 AND transaction_id = $2 AND line_no = 2`,
        [t.tenantId, moved.id],
      );
      await runner.query(`UPDATE balances SET qty_on_hand = qty_on_hand + 1 WHERE tenant_id = $1 AND location_id = $2`, [t.tenantId, f.locations[1].id]);
      await runner.query(`UPDATE inventory_positions SET qty_available_on_hand = qty_available_on_hand + 1 WHERE tenant_id = $1`, [t.tenantId]);
      const violations = await verifyLedger((text, params) => runner.query(text, params), t.tenantId);
      expect(violations.map((v) => v.check)).toEqual(['moves_net_zero']);
      expect(violations[0].rows).toEqual([expect.objectContaining({ transaction_id: moved.id, txn_no: moved.txnNo, item_id: f.item.id, lot_id: null })]);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
    expect(verify(t.tenantId).status).toBe(0);
  });

  /**
   * Each check catches its own drift: a tenant with stock, an allocated reservation, serials, a move and a
   * shipped sales order; then, for every check, the database is corrupted in exactly that way (as the
   * superuser, below the service, in a transaction rolled back afterwards — CHECK constraints that would
   * refuse the corruption are dropped inside it) and verifyLedger must report that check.
   */
  it('reports every kind of drift it checks for, each by its own check', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { items: [{}, { serialTracking: 'required' }] });
    const [plain, serial] = f.items;
    await adjust(t, { itemId: plain.id, locationId: f.location.id, qtyDelta: 10 });
    await reservationIn(t, f, 'allocated', { item: plain, qty: 3, stock: false });
    await adjust(t, { itemId: serial.id, locationId: f.location.id, qtyDelta: 2, serialNos: ['SN-1', 'SN-2'] });
    await t.post('/v1/inventory/moves', { lines: [{ itemId: plain.id, fromLocationId: f.location.id, toLocationId: f.locations[1].id, qty: 1 }] }).expect(201);
    const order = await salesOrderIn(t, 'shipped', { facilityId: f.facility.id, itemId: plain.id });
    expect(await verifyLedger((text, params) => ctx.db.query(text, params), t.tenantId)).toEqual([]);

    const T = t.tenantId;
    const corruptions: Record<string, string[]> = {
      balance_equals_ledger: [`UPDATE balances SET qty_on_hand = qty_on_hand + 1 WHERE tenant_id = '${T}' AND item_id = '${plain.id}' AND location_id = '${f.locations[1].id}'`],
      balance_not_negative: [dropChecks('balances'), `UPDATE balances SET qty_allocated = -1 WHERE tenant_id = '${T}' AND item_id = '${plain.id}' AND location_id = '${f.locations[1].id}'`],
      allocated_within_on_hand: [dropChecks('balances'), `UPDATE balances SET qty_allocated = qty_on_hand + 1 WHERE tenant_id = '${T}' AND item_id = '${plain.id}' AND location_id = '${f.location.id}'`],
      balance_allocated_equals_allocations: [dropChecks('allocations'), `UPDATE allocations SET qty = qty + 1 WHERE tenant_id = '${T}' AND status = 'active'`],
      reservation_allocated_equals_allocations: [dropChecks('reservations'), `UPDATE reservations SET qty_allocated = qty_allocated - 1 WHERE tenant_id = '${T}' AND status = 'allocated'`],
      position_matches_balances_and_holds: [`UPDATE inventory_positions SET qty_reserved = qty_reserved + 1 WHERE tenant_id = '${T}' AND item_id = '${plain.id}'`],
      holds_within_available: [dropChecks('inventory_positions'), `UPDATE inventory_positions SET qty_reserved = qty_available_on_hand + 1 WHERE tenant_id = '${T}' AND item_id = '${plain.id}'`],
      serials_match_balances: [`UPDATE serials SET in_stock = false WHERE tenant_id = '${T}' AND serial_no = 'SN-1'`],
      transactions_match_tx_counter: [`UPDATE document_sequences SET last_value = last_value + 1 WHERE tenant_id = '${T}' AND prefix = 'TX'`],
      // The ledger is append-only: a line slipped into the move.
      moves_net_zero: [
        `INSERT INTO ledger_lines (tenant_id, transaction_id, line_no, item_id, facility_id, location_id, lot_id, status_id, qty_delta)
         SELECT l.tenant_id, l.transaction_id, 3, l.item_id, l.facility_id, l.location_id, l.lot_id, l.status_id, 1
           FROM ledger_lines l JOIN ledger_transactions x ON x.tenant_id = l.tenant_id AND x.id = l.transaction_id
          WHERE x.type = 'move' AND l.tenant_id = '${T}' AND l.line_no = 2 RETURNING 1`,
      ],
      documents_match_postings: [dropChecks('sales_order_lines'), `UPDATE sales_order_lines SET qty_shipped_base = qty_shipped_base + 1 WHERE tenant_id = '${T}' AND sales_order_id = '${order.id}'`],
    };
    // Every check of verifyLedger has its corruption here: a new check without one fails this test.
    expect(Object.keys(corruptions).sort()).toEqual(INVARIANT_CHECKS.map((c) => c.name).sort());
    for (const [check, statements] of Object.entries(corruptions)) {
      const runner = ctx.db.createQueryRunner();
      await runner.connect();
      await runner.startTransaction();
      try {
        for (const statement of statements) {
          // Each corruption changes a row (one that matched none would prove nothing).
          const changed = statement.startsWith('DO ') ? ['ddl'] : ((await runner.query(/RETURNING/.test(statement) ? statement : `${statement} RETURNING 1`)) as unknown[]);
          if (statement.startsWith('DO ')) await runner.query(statement);
          const rows = Array.isArray(changed[0]) ? (changed[0] as unknown[]) : changed;
          expect({ check, changed: rows.length > 0 }).toEqual({ check, changed: true });
        }
        const reported = (await verifyLedger((text, params) => runner.query(text, params), T)).map((v) => v.check);
        expect({ check, reported: reported.includes(check) }).toEqual({ check, reported: true });
      } finally {
        await runner.rollbackTransaction();
        await runner.release();
      }
    }
    expect(await verifyLedger((text, params) => ctx.db.query(text, params), T)).toEqual([]);
  });

  it('refuses a malformed tenant argument', () => {
    const res = verify('not-a-uuid');
    expect(res.status).toBe(2);
    expect(res.stderr).toContain('usage: ledger:verify');
  });
});

/** A statement that drops every CHECK constraint of `table` (inside the test's transaction, rolled back after). */
function dropChecks(table: string): string {
  return `DO $$ DECLARE c record; BEGIN
    FOR c IN SELECT conname FROM pg_constraint WHERE conrelid = '${table}'::regclass AND contype = 'c' LOOP
      EXECUTE format('ALTER TABLE ${table} DROP CONSTRAINT %I', c.conname);
    END LOOP; END $$`;
}
