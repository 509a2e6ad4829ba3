import type * as Verify from '../../src/inventory/ledger/verify.sql';
import { fromDist } from '../support/dist';
import { newTenant, startApp, Tenant, TestContext } from '../support/app';
import { adjust, inventoryFixture } from '../support/fixtures';
import { expectWorkloadDone, mixedWorkload, statusCounts } from './workload';

const { verifyLedger } = fromDist<typeof Verify>('inventory/ledger/verify.sql');

/**
 * Oversell and negative-stock races, proven with real parallel HTTP requests and then checked
 * against the database: every invariant of CONTRACT.md §5 by SQL, for the tenant under test.
 */
describe('ledger under concurrency', () => {
  let ctx: TestContext;
  const sql = (text: string, params?: unknown[]) => ctx.db.query(text, params);

  beforeAll(async () => {
    ctx = await startApp({ DB_POOL_SIZE: '30' });
  });
  afterAll(() => ctx.close());

  async function expectInvariants(tenantId: string) {
    expect(await verifyLedger(sql, tenantId)).toEqual([]);
  }

  it('40 parallel reservations of 1 against 25 available: exactly 25 succeed', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 25 });

    const results = await Promise.all(
      Array.from({ length: 40 }, () => t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 1 })),
    );
    expect(statusCounts(results)).toEqual({ 201: 25, 409: 15 });
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.error).toBe('insufficient_stock');

    const [position] = await sql(
      `SELECT qty_available_on_hand::float AS on_hand, qty_reserved::float AS reserved FROM inventory_positions WHERE tenant_id = $1`,
      [t.tenantId],
    );
    expect(position).toEqual({ on_hand: 25, reserved: 25 });
    const [{ n }] = await sql(`SELECT count(*)::int AS n FROM reservations WHERE tenant_id = $1 AND status = 'open'`, [t.tenantId]);
    expect(n).toBe(25);
    // Reservation numbers stay unique and gap-free under the race (refused ones take none), in the rows and the answers.
    const numbers = await sql(`SELECT reservation_no FROM reservations WHERE tenant_id = $1 ORDER BY reservation_no`, [t.tenantId]);
    const expected = Array.from({ length: 25 }, (_, i) => `RS-${String(i + 1).padStart(6, '0')}`);
    expect(numbers.map((r: { reservation_no: string }) => r.reservation_no)).toEqual(expected);
    expect(results.filter((x) => x.status === 201).map((x) => x.body.data.reservationNo).sort()).toEqual(expected);
    await expectInvariants(t.tenantId);
  });

  it('50 parallel −1 adjustments against 30 on hand: exactly 30 succeed and the balance ends at 0', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 30 });

    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        t.post('/v1/inventory/adjustments', { itemId: f.item.id, locationId: f.location.id, qtyDelta: -1, reason: 'race' }),
      ),
    );
    expect(statusCounts(results)).toEqual({ 201: 30, 409: 20 });

    const [balance] = await sql(`SELECT qty_on_hand::float AS q FROM balances WHERE tenant_id = $1`, [t.tenantId]);
    expect(balance.q).toBe(0);
    const [ledger] = await sql(
      `SELECT count(*)::int AS lines, sum(qty_delta)::float AS total FROM ledger_lines WHERE tenant_id = $1`,
      [t.tenantId],
    );
    expect(ledger).toEqual({ lines: 31, total: 0 });
    // Transaction numbers stay unique and gap-free under the race.
    const numbers = (await sql(`SELECT txn_no FROM ledger_transactions WHERE tenant_id = $1 ORDER BY txn_no`, [t.tenantId])).map(
      (r: { txn_no: string }) => r.txn_no,
    );
    expect(numbers).toEqual(Array.from({ length: 31 }, (_, i) => `TX-${String(i + 1).padStart(6, '0')}`));
    await expectInvariants(t.tenantId);
  });

  it('parallel allocations of the same stock never pin more than is on hand', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { locations: 1 });
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 10 });
    const reservations = [];
    for (let i = 0; i < 5; i++) {
      reservations.push((await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 2 }).expect(201)).body.data);
    }
    // Each reservation allocated by several racing requests: only one allocation per reservation can win.
    const results = await Promise.all(
      reservations.flatMap((r) => Array.from({ length: 4 }, () => t.post(`/v1/inventory/reservations/${r.id}/allocate`))),
    );
    const counts = statusCounts(results);
    expect(counts[500]).toBeUndefined();
    const [balance] = await sql(`SELECT qty_on_hand::float AS on_hand, qty_allocated::float AS allocated FROM balances WHERE tenant_id = $1`, [
      t.tenantId,
    ]);
    expect(balance).toEqual({ on_hand: 10, allocated: 10 });
    await expectInvariants(t.tenantId);
  });

  it('mixed parallel adjustments, reservations, allocations, releases and fulfilments keep every invariant', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { items: [{}, {}, {}], locations: 2 });
    const results = await mixedWorkload([t], f, { rounds: 6, perRound: 30 });
    expectWorkloadDone(results, 50);
    await expectInvariants(t.tenantId);
    await expectBalancesEqualLedger(t);
  });

  async function expectBalancesEqualLedger(t: Tenant) {
    const rows = await sql(
      `SELECT b.qty_on_hand::text AS balance,
              (SELECT coalesce(sum(l.qty_delta), 0)::numeric(20,6)::text FROM ledger_lines l
                WHERE l.tenant_id = b.tenant_id AND l.item_id = b.item_id AND l.location_id = b.location_id
                  AND l.lot_id IS NOT DISTINCT FROM b.lot_id AND l.status_id = b.status_id) AS ledger
         FROM balances b WHERE b.tenant_id = $1`,
      [t.tenantId],
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r.balance).toBe(r.ledger);
  }
});
