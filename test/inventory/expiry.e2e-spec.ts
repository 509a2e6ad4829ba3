import type * as ExpiryJobModule from '../../src/inventory/ledger/expiry-job';
import type * as Verify from '../../src/inventory/ledger/verify.sql';
import { fromDist } from '../support/dist';
import { startApp, TestContext } from '../support/app';
import { adjust, lapseReservations, tenantWithStock } from '../support/fixtures';

const { ExpiryJob, EXPIRY_JOB_USER } = fromDist<typeof ExpiryJobModule>('inventory/ledger/expiry-job');
const { verifyLedger } = fromDist<typeof Verify>('inventory/ledger/verify.sql');

/**
 * Expired reservations leave the request path: reads change nothing and take no locks, postings and new
 * holds release what stands in their way, and the periodic job releases the rest.
 *
 * The test's clock: a reservation is created with an expiry an hour ahead and its `expires_at` then moved
 * into the past by SQL (as the superuser); the job is run on demand (`runOnce`). Nothing waits for a
 * window to pass, so a loaded machine cannot make a hold expire early or late.
 */
describe('reservation expiry', () => {
  let ctx: TestContext;
  const sql = (text: string, params?: unknown[]) => ctx.db.query(text, params);
  // The job is off in this app: each test runs it when it wants to.
  beforeAll(async () => {
    ctx = await startApp({ RESERVATION_EXPIRY_INTERVAL_SECONDS: '0' });
  });
  afterAll(() => ctx.close());

  const row = async (id: string) =>
    (await sql(`SELECT status, qty_allocated::float AS allocated, updated_by FROM reservations WHERE id = $1`, [id]))[0];
  /** Moves a reservation's expiry into the past (the database's own clock decides what has lapsed). */
  const lapse = async (id: string) => expect(await lapseReservations(ctx.db, [id])).toBe(1);
  const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();
  const balanceRow = async (tenantId: string) =>
    (await sql(`SELECT qty_on_hand::float AS on_hand, qty_allocated::float AS allocated FROM balances WHERE tenant_id = $1`, [tenantId]))[0];

  async function expiredAllocated(qty: number, stock = 10) {
    const g = await tenantWithStock(ctx, { qty: stock, locations: 1 });
    const r = (await g.t.post('/v1/inventory/reservations', { itemId: g.item.id, facilityId: g.facility.id, qty, expiresAt: inAnHour() }).expect(201)).body.data;
    await g.t.post(`/v1/inventory/reservations/${r.id}/allocate`).expect(200);
    await lapse(r.id);
    return { ...g, r };
  }

  it('reads show an expired reservation as released without writing or locking anything', async () => {
    const { t, item, facility, r } = await expiredAllocated(8);
    // Another transaction holds the reservation and the balance: reads must not wait for them.
    const holder = ctx.db.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    await holder.query(`SELECT 1 FROM reservations WHERE id = $1 FOR UPDATE`, [r.id]);
    await holder.query(`SELECT 1 FROM balances WHERE tenant_id = $1 FOR UPDATE`, [t.tenantId]);
    try {
      const started = Date.now();
      expect((await t.get(`/v1/inventory/reservations/${r.id}`).expect(200)).body.data).toMatchObject({ status: 'released', qtyAllocated: 0, allocations: [] });
      expect((await t.get('/v1/inventory/reservations').expect(200)).body.count).toBe(0);
      expect((await t.get('/v1/inventory/reservations?status=released').expect(200)).body.data.map((x: { id: string }) => x.id)).toEqual([r.id]);
      expect((await t.get(`/v1/inventory/balances?itemId=${item.id}`).expect(200)).body.data[0]).toMatchObject({ qtyOnHand: 10, qtyAllocated: 0 });
      expect((await t.get(`/v1/inventory/availability?itemId=${item.id}`).expect(200)).body.data[0]).toMatchObject({ qtyAllocated: 0, qtyAvailable: 10 });
      expect((await t.get(`/v1/inventory/availability?itemId=${item.id}&groupBy=facility`).expect(200)).body.data[0]).toMatchObject({ facilityId: facility.id, qtyAllocated: 0, qtyReserved: 0, qtyAvailable: 10 });
      expect((await t.get('/v1/inventory/allocations').expect(200)).body.count).toBe(0);
      expect(Date.now() - started).toBeLessThan(5000); // none of them waited on the held locks (the wait would be until commit)
    } finally {
      await holder.commitTransaction();
      await holder.release();
    }
    // The rows are as they were: only the job (or a posting that needs the stock) releases them.
    expect(await row(r.id)).toMatchObject({ status: 'allocated', allocated: 8 });
    expect(await balanceRow(t.tenantId)).toEqual({ on_hand: 10, allocated: 8 });
  });

  it('a posting or a new hold is not blocked by an expired one: it releases it', async () => {
    const { t, item, facility, location, r } = await expiredAllocated(8);
    await adjust(t, { itemId: item.id, locationId: location.id, qtyDelta: -9 });
    expect(await row(r.id)).toMatchObject({ status: 'released', allocated: 0 });
    expect(await balanceRow(t.tenantId)).toEqual({ on_hand: 1, allocated: 0 });

    const other = await expiredAllocated(8);
    await other.t.post('/v1/inventory/reservations', { itemId: other.item.id, facilityId: other.facility.id, qty: 9 }).expect(201);
    expect(await row(other.r.id)).toMatchObject({ status: 'released', allocated: 0 });
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
    expect(await verifyLedger(sql, other.t.tenantId)).toEqual([]);
    expect(facility.id).not.toBe(other.facility.id);
  });

  it('an outbound adjustment releases an expired hold at its position even when the stock would suffice without it', async () => {
    const g = await tenantWithStock(ctx, { qty: 10, locations: 1 });
    const r = (await g.t.post('/v1/inventory/reservations', { itemId: g.item.id, facilityId: g.facility.id, qty: 3, expiresAt: inAnHour() }).expect(201)).body.data;
    await lapse(r.id);
    // (10 on hand, 3 still reserved by the lapsed hold: −1 fits either way; the posting releases the hold as it passes)
    await adjust(g.t, { itemId: g.item.id, locationId: g.location.id, qtyDelta: -1 });
    expect(await row(r.id)).toMatchObject({ status: 'released' });
    const [position] = await sql(`SELECT qty_available_on_hand::float AS on_hand, qty_reserved::float AS reserved FROM inventory_positions WHERE tenant_id = $1`, [g.t.tenantId]);
    expect(position).toEqual({ on_hand: 9, reserved: 0 });
    // inbound postings leave it to the job
    const s = (await g.t.post('/v1/inventory/reservations', { itemId: g.item.id, facilityId: g.facility.id, qty: 2, expiresAt: inAnHour() }).expect(201)).body.data;
    await lapse(s.id);
    await adjust(g.t, { itemId: g.item.id, locationId: g.location.id, qtyDelta: 1 });
    expect(await row(s.id)).toMatchObject({ status: 'open' });
    expect(await verifyLedger(sql, g.t.tenantId)).toEqual([]);
  });

  it('the job releases expired reservations of every tenant, once, and leaves live ones', async () => {
    const one = await expiredAllocated(4);
    const two = await expiredAllocated(3);
    // (A new hold at one's position would release one's expired reservation itself: the live one is elsewhere.)
    const other = await tenantWithStock(ctx, { qty: 5, locations: 1 });
    const live = (await other.t.post('/v1/inventory/reservations', { itemId: other.item.id, facilityId: other.facility.id, qty: 2, expiresAt: '2099-01-01T00:00:00Z' }).expect(201)).body.data;
    const job = ctx.app.get(ExpiryJob);
    expect(await job.runOnce()).toBeGreaterThanOrEqual(2);
    for (const { r, t } of [one, two]) {
      expect(await row(r.id)).toEqual({ status: 'released', allocated: 0, updated_by: EXPIRY_JOB_USER });
      expect(await balanceRow(t.tenantId)).toEqual({ on_hand: 10, allocated: 0 });
      expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
    }
    expect(await row(live.id)).toMatchObject({ status: 'open' });
    const version = (await one.t.get(`/v1/inventory/reservations/${one.r.id}`).expect(200)).body.data.version;
    await job.runOnce();
    expect((await one.t.get(`/v1/inventory/reservations/${one.r.id}`).expect(200)).body.data.version).toBe(version);
  });
});
