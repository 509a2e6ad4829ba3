import type * as ExpiryJobModule from '../../src/inventory/ledger/expiry-job';
import type * as Verify from '../../src/inventory/ledger/verify.sql';
import { fromDist } from '../support/dist';
import { newTenant, startApp, TestContext } from '../support/app';
import { adjust, inventoryFixture } from '../support/fixtures';
import { statusCounts } from './workload';
import { backendPid, waiterBlockedBy } from '../support/locks';

const { verifyLedger } = fromDist<typeof Verify>('inventory/ledger/verify.sql');
const { ExpiryJob } = fromDist<typeof ExpiryJobModule>('inventory/ledger/expiry-job');

/** Interleavings that once broke the ledger, replayed deterministically or by brute force. */
describe('ledger races', () => {
  let ctx: TestContext;
  const sql = (text: string, params?: unknown[]) => ctx.db.query(text, params);
  beforeAll(async () => {
    ctx = await startApp({ DB_POOL_SIZE: '30' });
  });
  afterAll(() => ctx.close());

  it('an action on a reservation that expired while another request held it is refused, and nothing is freed twice', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { locations: 1 });
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 10 });
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const r = (await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 4, expiresAt }).expect(201)).body.data;
    await t.post(`/v1/inventory/reservations/${r.id}/allocate`).expect(200);

    // Another transaction holds the reservation past its expiry: the sweep must skip it...
    const holder = ctx.db.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    await holder.query(`SELECT 1 FROM reservations WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, [t.tenantId, r.id]);
    const holderPid = await backendPid((text, params) => holder.query(text, params));
    // (the test's clock: the holder moves its expiry into the past, so it lapses while held, with no window to wait out)
    await holder.query(`UPDATE reservations SET expires_at = now() - interval '1 second' WHERE tenant_id = $1 AND id = $2`, [t.tenantId, r.id]);
    // ...so the fulfil request waits for it, and then finds an expired reservation.
    const fulfil = t.post(`/v1/inventory/reservations/${r.id}/fulfill`).then((res) => res);
    // the fulfil request's backend waits for the holder's lock on the reservation: the race is staged
    const waiter = await waiterBlockedBy(sql, holderPid);
    expect(waiter).toMatchObject({ waitEventType: 'Lock', blockedBy: [holderPid] });
    await holder.commitTransaction();
    await holder.release();
    const res = await fulfil;

    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: 'invalid_state', message: expect.stringContaining('expired') });
    expect((await t.get(`/v1/inventory/reservations/${r.id}`).expect(200)).body.data).toMatchObject({ status: 'released', qtyAllocated: 0 });
    // Reads already leave the expired hold out; the expiry job then releases its rows, once.
    expect((await t.get(`/v1/inventory/balances?itemId=${f.item.id}`).expect(200)).body.data[0]).toMatchObject({ qtyOnHand: 10, qtyAllocated: 0 });
    await ctx.app.get(ExpiryJob).runOnce();
    await ctx.app.get(ExpiryJob).runOnce();
    const [balance] = await sql(`SELECT qty_on_hand::float AS on_hand, qty_allocated::float AS allocated FROM balances WHERE tenant_id = $1`, [t.tenantId]);
    expect(balance).toEqual({ on_hand: 10, allocated: 0 });
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it('parallel first postings of the same new lot number all succeed on one lot', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { items: [{ lotTracking: 'required' }], locations: 1 });
    const results = await Promise.all(
      Array.from({ length: 30 }, () =>
        t.post('/v1/inventory/adjustments', { itemId: f.item.id, locationId: f.location.id, qtyDelta: 1, lotNo: 'LOT-RACE', reason: 'race' }),
      ),
    );
    expect(statusCounts(results)).toEqual({ 201: 30 });
    const lots = await sql(`SELECT id FROM lots WHERE tenant_id = $1`, [t.tenantId]);
    expect(lots).toHaveLength(1);
    const [balance] = await sql(`SELECT lot_id, qty_on_hand::float AS q FROM balances WHERE tenant_id = $1`, [t.tenantId]);
    expect(balance).toEqual({ lot_id: lots[0].id, q: 30 });
  });

  it("an item's tracking mode cannot change under a posting in flight", async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { items: Array.from({ length: 20 }, () => ({})), locations: 1 });
    // Both requests of an item in flight together, sent in either order (half the items each way), the
    // second 0, 0, 2, 5 or 10 ms after the first: the close ones race, the later ones let the first-sent
    // side win, so the race goes each way whatever this machine's timing favours.
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const pairs = await Promise.all(
      f.items.map(async (item, i) => {
        const adjust = () => t.post('/v1/inventory/adjustments', { itemId: item.id, locationId: f.location.id, qtyDelta: 1, reason: 'race' }).then((r) => r);
        const patch = () => t.patch(`/v1/items/${item.id}`, { lotTracking: 'required' }).then((r) => r);
        const gap = [0, 0, 2, 5, 10][Math.floor(i / 2) % 5];
        const later = <T>(send: () => Promise<T>) => pause(gap).then(send);
        const [posting, change] = i % 2 ? await Promise.all([adjust(), later(patch)]) : await Promise.all([patch(), later(adjust)]).then(([p, a]) => [a, p]);
        return { posting: posting.status, change: change.status, lotTracking: (await t.get(`/v1/items/${item.id}`).expect(200)).body.data.lotTracking };
      }),
    );
    // Exactly one of each pair succeeded, the other was refused with a client error (never a 5xx)...
    for (const p of pairs) {
      expect([p.posting < 300, p.change < 300].filter(Boolean)).toHaveLength(1);
      expect([p.posting, p.change].every((s) => s < 500)).toBe(true);
      expect(p.lotTracking).toBe(p.change < 300 ? 'required' : 'none');
    }
    // ...and both sides won at least once: the race went each way.
    expect(pairs.filter((p) => p.posting === 201).length).toBeGreaterThan(0);
    expect(pairs.filter((p) => p.change === 200).length).toBeGreaterThan(0);
    // Either the posting came first (then the PATCH saw its ledger line and was refused) or the PATCH
    // did (then the posting, lacking a lot, was refused): never a lot-tracked item with lot-less lines.
    const broken = await sql(
      `SELECT i.item_no FROM items i
        WHERE i.tenant_id = $1 AND i.lot_tracking = 'required'
          AND EXISTS (SELECT 1 FROM ledger_lines l WHERE l.tenant_id = i.tenant_id AND l.item_id = i.id AND l.lot_id IS NULL)`,
      [t.tenantId],
    );
    expect(broken).toEqual([]);
  });
});
