import { randomUUID } from 'node:crypto';
import type * as Verify from '../../src/inventory/ledger/verify.sql';
import { fromDist } from '../support/dist';
import { newTenant, startApp, Tenant, TestContext } from '../support/app';
import { adjust, facilityWithLocations, InventoryFixture, inventoryFixture, lotId, onHand } from '../support/fixtures';
import { drainFeed } from '../support/feed';
import { backendPid, blockedBehind, waiterBlockedBy } from '../support/locks';
import { subOf, UUID } from '../support/matchers';
import { statusCounts } from './workload';

const { verifyLedger } = fromDist<typeof Verify>('inventory/ledger/verify.sql');

const MOVES = '/v1/inventory/moves';

/** CONTRACT §9: moves inside one facility, bin to bin and status to status, as one `move` transaction. */
describe('inventory moves', () => {
  let ctx: TestContext;
  const sql = (text: string, params?: unknown[]) => ctx.db.query(text, params);
  beforeAll(async () => {
    ctx = await startApp({ DB_POOL_SIZE: '30' });
  });
  afterAll(() => ctx.close());

  /** A tenant with `qty` of the fixture's item at its first location (Available), 3 locations. */
  async function stocked(qty = 10, items?: Array<Record<string, unknown>>): Promise<{ t: Tenant; f: InventoryFixture }> {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { locations: 3, items });
    if (qty) await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: qty });
    return { t, f };
  }

  const move = (t: Tenant, lines: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}) => t.post(MOVES, { lines, ...extra });

  /** Available-to-promise of the item at the fixture's facility (0 when it has no row). */
  async function atp(t: Tenant, f: InventoryFixture): Promise<number> {
    const rows = (await t.get(`/v1/inventory/availability?itemId=${f.item.id}&groupBy=facility`).expect(200)).body.data as Array<{ facilityId: string; qtyAvailable: number }>;
    return rows.find((r) => r.facilityId === f.facility.id)?.qtyAvailable ?? 0;
  }

  describe('the move transaction', () => {
    it('bin to bin: one `move` transaction of a −qty line at the source and a +qty line at the target', async () => {
      const { t, f } = await stocked(10);
      const [b1, b2] = f.locations;
      const res = await move(t, [{ itemId: f.item.id, fromLocationId: b1.id, toLocationId: b2.id, qty: 4 }], { reason: 'replenish pick face' }).expect(201);
      const available = f.status('AVAILABLE');
      expect(res.body).toEqual({
        data: {
          id: expect.stringMatching(UUID),
          txnNo: 'TX-000002',
          type: 'move',
          postedAt: expect.any(String),
          postedBy: subOf(t.token),
          reason: 'replenish pick face',
          sourceType: 'move',
          sourceId: null,
          lines: [
            { lineNo: 1, itemId: f.item.id, locationId: b1.id, lotId: null, lotNo: null, statusId: available, qtyDelta: -4, serialNos: [] },
            { lineNo: 2, itemId: f.item.id, locationId: b2.id, lotId: null, lotNo: null, statusId: available, qtyDelta: 4, serialNos: [] },
          ],
        },
      });
      expect(await onHand(t, { itemId: f.item.id, locationId: b1.id })).toBe(6);
      expect(await onHand(t, { itemId: f.item.id, locationId: b2.id })).toBe(4);
      // Inside one facility in Available statuses: available-to-promise is unchanged.
      expect(await atp(t, f)).toBe(10);
      expect((await t.get(`/v1/inventory/transactions/${res.body.data.id}`).expect(200)).body).toEqual(res.body);
      // `move` is a transaction type of the list's filter.
      const listed = (await t.get('/v1/inventory/transactions?type=move').expect(200)).body;
      expect(listed).toMatchObject({ count: 1, data: [{ id: res.body.data.id, type: 'move' }] });
      expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
    });

    it('status to status in the same bin, and several lines numbered in order (−/+ per request line)', async () => {
      const { t, f } = await stocked(10, [{}, {}]);
      await adjust(t, { itemId: f.items[1].id, locationId: f.location.id, qtyDelta: 5 });
      const [b1, b2] = f.locations;
      const res = await move(t, [
        { itemId: f.item.id, fromLocationId: b1.id, toStatusId: f.status('DAMAGED'), qty: 3 },
        { itemId: f.items[1].id, fromLocationId: b1.id, toLocationId: b2.id, qty: 5 },
      ]).expect(201);
      expect(res.body.data.lines.map((l: Record<string, unknown>) => [l.lineNo, l.itemId, l.locationId, l.statusId, l.qtyDelta])).toEqual([
        [1, f.item.id, b1.id, f.status('AVAILABLE'), -3],
        [2, f.item.id, b1.id, f.status('DAMAGED'), 3],
        [3, f.items[1].id, b1.id, f.status('AVAILABLE'), -5],
        [4, f.items[1].id, b2.id, f.status('AVAILABLE'), 5],
      ]);
      expect(await onHand(t, { itemId: f.item.id, locationId: b1.id })).toBe(7);
      expect(await onHand(t, { itemId: f.item.id, locationId: b1.id, statusCode: 'DAMAGED' })).toBe(3);
      // Out of Available into a status that is not: no longer available to promise.
      expect(await atp(t, f)).toBe(7);
      expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
    });

    it('defaults: toLocationId = fromLocationId, fromStatusId = AVAILABLE, toStatusId = fromStatusId', async () => {
      const { t, f } = await stocked(0);
      const [b1, b2] = f.locations;
      await adjust(t, { itemId: f.item.id, locationId: b1.id, qtyDelta: 4, statusId: f.status('DAMAGED') });
      // From DAMAGED, without toStatusId: it stays DAMAGED at the new bin.
      const res = await move(t, [{ itemId: f.item.id, fromLocationId: b1.id, toLocationId: b2.id, fromStatusId: f.status('DAMAGED'), qty: 4 }]).expect(201);
      expect(res.body.data.lines.map((l: Record<string, unknown>) => [l.locationId, l.statusId, l.qtyDelta])).toEqual([
        [b1.id, f.status('DAMAGED'), -4],
        [b2.id, f.status('DAMAGED'), 4],
      ]);
      // Without fromStatusId the source is AVAILABLE (none there: 409), without toLocationId the same bin.
      await adjust(t, { itemId: f.item.id, locationId: b2.id, qtyDelta: 2 });
      const back = await move(t, [{ itemId: f.item.id, fromLocationId: b2.id, toStatusId: f.status('QUARANTINE'), qty: 2 }]).expect(201);
      expect(back.body.data.lines.map((l: Record<string, unknown>) => [l.locationId, l.statusId, l.qtyDelta])).toEqual([
        [b2.id, f.status('AVAILABLE'), -2],
        [b2.id, f.status('QUARANTINE'), 2],
      ]);
      expect(await onHand(t, { itemId: f.item.id, locationId: b2.id, statusCode: 'DAMAGED' })).toBe(4);
      expect(await onHand(t, { itemId: f.item.id, locationId: b2.id, statusCode: 'QUARANTINE' })).toBe(2);
    });

    it('converts a quantity in another UOM of the item to base units', async () => {
      const t = await newTenant(ctx);
      const base = await inventoryFixture(t, { locations: 2 });
      const box = { id: base.uom('BOX') };
      const item = (await t.post('/v1/items', { itemNo: `BOXED-${randomUUID().slice(0, 6)}`, name: 'Boxed', baseUomId: base.uom('EA'), uomConversions: [{ uomId: box.id, factor: 12 }] }).expect(201)).body.data;
      await adjust(t, { itemId: item.id, locationId: base.location.id, qtyDelta: 30 });
      const res = await move(t, [{ itemId: item.id, fromLocationId: base.locations[0].id, toLocationId: base.locations[1].id, qty: 2, uomId: box.id }]).expect(201);
      expect(res.body.data.lines.map((l: { qtyDelta: number }) => l.qtyDelta)).toEqual([-24, 24]);
      const bad = await move(t, [{ itemId: item.id, fromLocationId: base.locations[0].id, toLocationId: base.locations[1].id, qty: 1, uomId: base.uom('KG') }]).expect(400);
      expect(bad.body.details).toEqual([expect.objectContaining({ field: 'lines[0].uomId' })]);
    });
  });

  describe('refusals', () => {
    it('400 validation_failed naming the field: a line that changes nothing, another facility, bounds', async () => {
      const { t, f } = await stocked(10);
      const [b1] = f.locations;
      const field = async (lines: Array<Record<string, unknown>>, body: Record<string, unknown> = {}) => {
        const res = await move(t, lines, body).expect(400);
        expect(res.body).toMatchObject({ error: 'validation_failed', status: 400 });
        return res.body.details.map((d: { field: string }) => d.field);
      };
      const ok = { itemId: f.item.id, fromLocationId: b1.id, toLocationId: f.locations[1].id, qty: 1 };
      expect(await field([{ itemId: f.item.id, fromLocationId: b1.id, qty: 1 }])).toEqual(['lines[0].toLocationId']);
      expect(await field([ok, { itemId: f.item.id, fromLocationId: b1.id, toLocationId: b1.id, qty: 1 }])).toEqual(['lines[1].toLocationId']);
      expect(await field([{ itemId: f.item.id, fromLocationId: b1.id, toStatusId: f.status('AVAILABLE'), qty: 1 }])).toEqual(['lines[0].toStatusId']);
      expect(
        await field([{ itemId: f.item.id, fromLocationId: b1.id, fromStatusId: f.status('DAMAGED'), toStatusId: f.status('DAMAGED'), qty: 1 }]),
      ).toEqual(['lines[0].toStatusId']);
      // Between facilities: transfers.
      const other = await facilityWithLocations(t, 1);
      expect(await field([{ ...ok, toLocationId: other.location.id }])).toEqual(['lines[0].toLocationId']);
      // Bounds of the body.
      expect(await field([])).toEqual(['lines']);
      expect(await field(Array.from({ length: 1001 }, () => ok))).toEqual(['lines']);
      expect(await field([{ ...ok, qty: 0 }])).toEqual(['lines[0].qty']);
      expect(await field([{ ...ok, qty: -1 }])).toEqual(['lines[0].qty']);
      expect(await field([{ ...ok, qty: 1_000_000_000 }])).toEqual(['lines[0].qty']);
      expect(await field([{ ...ok, qty: 0.5 }])).toEqual(['lines[0].qty']);
      expect(await field([{ ...ok, lotNo: 'L1' }])).toEqual(['lines[0].lotNo']);
      expect(await field([{ ...ok, serialNos: ['S1'] }])).toEqual(['lines[0].serialNos']);
      expect(await field([{ ...ok, toLocationId: 'nope' }])).toEqual(['lines[0].toLocationId']);
      expect(await field([ok], { reason: '' })).toEqual(['reason']);
      expect(await field([ok], { reason: 'x'.repeat(501) })).toEqual(['reason']);
      expect(await field([{ ...ok, extra: 1 }])).toEqual(['lines[0].extra']);
      // Unknown references: 404 naming the field.
      for (const [key, value] of [['itemId', randomUUID()], ['fromLocationId', randomUUID()], ['toLocationId', randomUUID()], ['fromStatusId', randomUUID()], ['toStatusId', randomUUID()]]) {
        const res = await move(t, [{ ...ok, [key]: value }]).expect(404);
        expect(res.body.details).toEqual([{ field: `lines[0].${key}`, message: 'not found' }]);
      }
      // Nothing was posted.
      expect(await onHand(t, { itemId: f.item.id, locationId: b1.id })).toBe(10);
      expect((await t.get('/v1/inventory/transactions?type=move').expect(200)).body.count).toBe(0);
    });

    it('409 insufficient_stock naming the line: more than on hand, all or nothing', async () => {
      const { t, f } = await stocked(10);
      const [b1, b2, b3] = f.locations;
      const res = await move(t, [
        { itemId: f.item.id, fromLocationId: b1.id, toLocationId: b2.id, qty: 3 },
        { itemId: f.item.id, fromLocationId: b2.id, toLocationId: b3.id, qty: 5 },
      ]).expect(409);
      expect(res.body).toMatchObject({ error: 'insufficient_stock' });
      expect(res.body.details).toEqual([
        expect.objectContaining({ field: 'lines[1].qty', itemId: f.item.id, locationId: b2.id, requested: 2, available: 0 }),
      ]);
      const over = await move(t, [{ itemId: f.item.id, fromLocationId: b1.id, toLocationId: b2.id, qty: 11 }]).expect(409);
      expect(over.body.details).toEqual([expect.objectContaining({ field: 'lines[0].qty', requested: 11, available: 10 })]);
      expect(await onHand(t, { itemId: f.item.id, locationId: b1.id })).toBe(10);
      expect(await onHand(t, { itemId: f.item.id, locationId: b2.id })).toBe(0);
      expect((await t.get('/v1/inventory/transactions?type=move').expect(200)).body.count).toBe(0);
    });

    it('only unallocated stock moves: qty ≤ qtyOnHand − qtyAllocated at the source', async () => {
      const { t, f } = await stocked(10);
      const [b1, b2] = f.locations;
      const r = (await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 4 }).expect(201)).body.data;
      await t.post(`/v1/inventory/reservations/${r.id}/allocate`, {}).expect(200);
      const res = await move(t, [{ itemId: f.item.id, fromLocationId: b1.id, toLocationId: b2.id, qty: 7 }]).expect(409);
      expect(res.body).toMatchObject({ error: 'insufficient_stock' });
      expect(res.body.details).toEqual([expect.objectContaining({ field: 'lines[0].qty', requested: 7, available: 6 })]);
      await move(t, [{ itemId: f.item.id, fromLocationId: b1.id, toLocationId: b2.id, qty: 6 }]).expect(201);
      const [balance] = (await t.get(`/v1/inventory/balances?itemId=${f.item.id}&locationId=${b1.id}`).expect(200)).body.data;
      expect(balance).toMatchObject({ qtyOnHand: 4, qtyAllocated: 4 });
      expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
    });

    it('lines that cancel each other out are checked line by line, in order: stock that is not there never moves (409)', async () => {
      const { t, f } = await stocked(0);
      const [b1, b2] = f.locations;
      const there = { itemId: f.item.id, fromLocationId: b1.id, toLocationId: b2.id, qty: 10 };
      const back = { itemId: f.item.id, fromLocationId: b2.id, toLocationId: b1.id, qty: 10 };
      const res = await move(t, [there, back]).expect(409);
      expect(res.body).toMatchObject({ error: 'insufficient_stock' });
      expect(res.body.details).toEqual([expect.objectContaining({ field: 'lines[0].qty', itemId: f.item.id, locationId: b1.id, requested: 10, available: 0 })]);
      // With balance rows in place (at zero) too, and in the other order.
      await adjust(t, { itemId: f.item.id, locationId: b2.id, qtyDelta: 4 });
      await adjust(t, { itemId: f.item.id, locationId: b2.id, qtyDelta: -4 });
      expect((await move(t, [back, there]).expect(409)).body.details).toEqual([expect.objectContaining({ field: 'lines[0].qty', locationId: b2.id, requested: 10, available: 0 })]);
      expect((await t.get('/v1/inventory/transactions?type=move').expect(200)).body.count).toBe(0);
    });

    it('allocated stock never moves, not even when a later line of the move brings as much back in; an earlier line\'s stock may move on', async () => {
      const { t, f } = await stocked(50);
      const [b1, b2, b3] = f.locations;
      await adjust(t, { itemId: f.item.id, locationId: b2.id, qtyDelta: 50 });
      const r = (await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 50 }).expect(201)).body.data;
      await t.post(`/v1/inventory/reservations/${r.id}/allocate`, { allocations: [{ locationId: b1.id, qty: 50 }] }).expect(200);
      const out = { itemId: f.item.id, fromLocationId: b1.id, toLocationId: b3.id, qty: 50 };
      const into = { itemId: f.item.id, fromLocationId: b2.id, toLocationId: b1.id, qty: 50 };
      // B-1's 50 are all allocated when the first line takes them out.
      const res = await move(t, [out, into]).expect(409);
      expect(res.body.details).toEqual([expect.objectContaining({ field: 'lines[0].qty', locationId: b1.id, requested: 50, available: 0 })]);
      // Brought in first, the 50 from B-2 are unallocated at B-1 when the second line moves them on.
      await move(t, [into, out]).expect(201);
      const balances = (await t.get(`/v1/inventory/balances?itemId=${f.item.id}`).expect(200)).body.data as Array<{ locationId: string; qtyOnHand: number; qtyAllocated: number }>;
      expect(balances.map((b) => [b.locationId, b.qtyOnHand, b.qtyAllocated])).toEqual(
        expect.arrayContaining([[b1.id, 50, 50], [b3.id, 50, 0]]),
      );
      expect(balances.find((b) => b.locationId === b2.id)).toBeUndefined();
      expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
    });

    it('lines that cancel out are checked against the balance as it is once a posting in flight has committed', async () => {
      const { t, f } = await stocked(10);
      const [b1, b2, b3] = f.locations;
      // Another transaction holds B-1's balance, as a posting in flight would.
      const holder = ctx.db.createQueryRunner();
      await holder.connect();
      try {
        await holder.startTransaction();
        await holder.query(`SELECT 1 FROM balances WHERE tenant_id = $1 AND location_id = $2 FOR UPDATE`, [t.tenantId, b1.id]);
        const holderPid = await backendPid((text, params) => holder.query(text, params));
        // A move of all 10 out of B-1 waits first, then a round trip of the same 10 behind it.
        const away = move(t, [{ itemId: f.item.id, fromLocationId: b1.id, toLocationId: b3.id, qty: 10 }]).then((res) => res);
        await waiterBlockedBy(sql, holderPid);
        const roundTrip = move(t, [
          { itemId: f.item.id, fromLocationId: b1.id, toLocationId: b2.id, qty: 10 },
          { itemId: f.item.id, fromLocationId: b2.id, toLocationId: b1.id, qty: 10 },
        ]).then((res) => res);
        expect(await blockedBehind(sql, holderPid, 2)).toBe(2);
        await holder.commitTransaction();
        expect((await away).status).toBe(201);
        const res = await roundTrip;
        expect(res.status).toBe(409);
        expect(res.body.details).toEqual([expect.objectContaining({ field: 'lines[0].qty', locationId: b1.id, requested: 10, available: 0 })]);
      } finally {
        await holder.release();
      }
      expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
    });

    it('a key whose lines cancel out is not changed: no stock.changed for it (and none with qtyDelta 0)', async () => {
      const { t, f } = await stocked(10);
      const [b1, b2, b3] = f.locations;
      const { cursor } = await drainFeed(ctx.db, t);
      const roundTrip = (await move(t, [
        { itemId: f.item.id, fromLocationId: b1.id, toLocationId: b2.id, qty: 10 },
        { itemId: f.item.id, fromLocationId: b2.id, toLocationId: b1.id, qty: 10 },
      ]).expect(201)).body.data;
      const through = (await move(t, [
        { itemId: f.item.id, fromLocationId: b1.id, toLocationId: b2.id, qty: 4 },
        { itemId: f.item.id, fromLocationId: b2.id, toLocationId: b3.id, qty: 4 },
      ]).expect(201)).body.data;
      const { events } = await drainFeed(ctx.db, t, cursor);
      expect(events.map((e) => [e.type, e.data.transactionId ?? e.subject.id, e.data.locationId ?? null, e.data.qtyDelta ?? null])).toEqual([
        ['transaction.posted', roundTrip.id, null, null],
        ['transaction.posted', through.id, null, null],
        ['stock.changed', through.id, b1.id, -4],
        ['stock.changed', through.id, b3.id, 4],
      ]);
      expect(await onHand(t, { itemId: f.item.id, locationId: b1.id })).toBe(6);
      expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
    });

    it('a move out of Available keeps the facility\'s reservations covered (invariant 4): 409, not 500', async () => {
      const { t, f } = await stocked(10);
      const [b1, b2] = f.locations;
      await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 8 }).expect(201);
      // Bin to bin in Available statuses leaves the facility's available stock as it is: allowed.
      await move(t, [{ itemId: f.item.id, fromLocationId: b1.id, toLocationId: b2.id, qty: 10 }]).expect(201);
      const res = await move(t, [{ itemId: f.item.id, fromLocationId: b2.id, toStatusId: f.status('QUARANTINE'), qty: 3 }]).expect(409);
      expect(res.body).toMatchObject({ error: 'insufficient_stock' });
      expect(res.body.details).toEqual([expect.objectContaining({ field: 'lines[0].qty', itemId: f.item.id, requested: 3, available: 2 })]);
      await move(t, [{ itemId: f.item.id, fromLocationId: b2.id, toStatusId: f.status('QUARANTINE'), qty: 2 }]).expect(201);
      expect(await atp(t, f)).toBe(0);
      expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
    });

    it('409 invalid_state for an inactive item, facility or target location; an inactive source location may be emptied', async () => {
      const { t, f } = await stocked(10);
      const [b1, b2, b3] = f.locations;
      const line = (from: string, to: string, qty = 1) => [{ itemId: f.item.id, fromLocationId: from, toLocationId: to, qty }];
      await move(t, line(b1.id, b2.id, 5)).expect(201);

      // The source location goes inactive: what is there may still be moved out (emptied)…
      await t.patch(`/v1/facilities/${f.facility.id}/locations/${b1.id}`, { isActive: false }).expect(200);
      await move(t, line(b1.id, b2.id, 5)).expect(201);
      expect(await onHand(t, { itemId: f.item.id, locationId: b1.id })).toBe(0);
      // …but nothing moves into it, nor changes status there.
      const into = await move(t, line(b2.id, b1.id)).expect(409);
      expect(into.body).toMatchObject({ error: 'invalid_state', message: expect.stringContaining('inactive') });
      await adjust(t, { itemId: f.item.id, locationId: b3.id, qtyDelta: 1 });
      await t.patch(`/v1/facilities/${f.facility.id}/locations/${b3.id}`, { isActive: false }).expect(200);
      expect((await move(t, [{ itemId: f.item.id, fromLocationId: b3.id, toStatusId: f.status('DAMAGED'), qty: 1 }]).expect(409)).body.error).toBe('invalid_state');

      await t.patch(`/v1/items/${f.item.id}`, { isActive: false }).expect(200);
      expect((await move(t, line(b2.id, b3.id)).expect(409)).body.error).toBe('invalid_state');
      await t.patch(`/v1/items/${f.item.id}`, { isActive: true }).expect(200);
      await t.patch(`/v1/facilities/${f.facility.id}/locations/${b3.id}`, { isActive: true }).expect(200);
      await t.patch(`/v1/facilities/${f.facility.id}`, { isActive: false }).expect(200);
      expect((await move(t, line(b2.id, b3.id)).expect(409)).body).toMatchObject({ error: 'invalid_state', message: expect.stringContaining('facility') });
      await t.patch(`/v1/facilities/${f.facility.id}`, { isActive: true }).expect(200);
      await move(t, line(b2.id, b3.id)).expect(201);
      expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
    });
  });

  describe('lots and serials', () => {
    it('lots are kept: both lines name the same lot; a lot-tracked item needs lotNo; an unknown lot is short and created nowhere', async () => {
      const { t, f } = await stocked(0, [{ lotTracking: 'required', expiryTracking: 'required' }]);
      const [b1, b2] = f.locations;
      await adjust(t, { itemId: f.item.id, locationId: b1.id, qtyDelta: 6, lotNo: 'L-1', expiryDate: '2031-01-31' });
      await adjust(t, { itemId: f.item.id, locationId: b1.id, qtyDelta: 2, lotNo: 'L-2', expiryDate: '2031-06-30' });
      const lot1 = await lotId(t, f.item.id, 'L-1');
      const res = await move(t, [{ itemId: f.item.id, fromLocationId: b1.id, toLocationId: b2.id, lotNo: 'L-1', qty: 4 }]).expect(201);
      expect(res.body.data.lines.map((l: Record<string, unknown>) => [l.locationId, l.lotId, l.lotNo, l.qtyDelta])).toEqual([
        [b1.id, lot1, 'L-1', -4],
        [b2.id, lot1, 'L-1', 4],
      ]);
      expect(await onHand(t, { itemId: f.item.id, locationId: b2.id, lotId: lot1 })).toBe(4);
      expect(await onHand(t, { itemId: f.item.id, locationId: b1.id, lotId: lot1 })).toBe(2);

      const missing = await move(t, [{ itemId: f.item.id, fromLocationId: b1.id, toLocationId: b2.id, qty: 1 }]).expect(400);
      expect(missing.body.details).toEqual([expect.objectContaining({ field: 'lines[0].lotNo' })]);
      // More of a lot than the bin holds of it.
      const short = await move(t, [{ itemId: f.item.id, fromLocationId: b1.id, toLocationId: b2.id, lotNo: 'L-2', qty: 3 }]).expect(409);
      expect(short.body.details).toEqual([expect.objectContaining({ field: 'lines[0].qty', requested: 3, available: 2 })]);
      // A lot number never received: short of it (not a new lot wanting an expiry date), and no lot made.
      const unknown = await move(t, [{ itemId: f.item.id, fromLocationId: b1.id, toLocationId: b2.id, lotNo: 'L-NEW', qty: 1 }]).expect(409);
      expect(unknown.body).toMatchObject({ error: 'insufficient_stock', details: [expect.objectContaining({ field: 'lines[0].qty' })] });
      expect(await sql(`SELECT lot_no FROM lots WHERE tenant_id = $1 ORDER BY lot_no`, [t.tenantId])).toEqual([{ lot_no: 'L-1' }, { lot_no: 'L-2' }]);
      expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
    });

    it('serials move: named serials in stock at the source location and status follow to the target', async () => {
      const { t, f } = await stocked(0, [{ serialTracking: 'required' }]);
      const [b1, b2] = f.locations;
      await adjust(t, { itemId: f.item.id, locationId: b1.id, qtyDelta: 3, serialNos: ['S-1', 'S-2', 'S-3'] });
      const serials = async () =>
        Object.fromEntries(
          (await sql(
            `SELECT s.serial_no, s.location_id, st.code, s.in_stock FROM serials s JOIN stock_statuses st ON st.tenant_id = s.tenant_id AND st.id = s.status_id
              WHERE s.tenant_id = $1 ORDER BY s.serial_no`,
            [t.tenantId],
          )).map((r: { serial_no: string; location_id: string; code: string; in_stock: boolean }) => [r.serial_no, [r.location_id, r.code, r.in_stock]]),
        );

      const res = await move(t, [{ itemId: f.item.id, fromLocationId: b1.id, toLocationId: b2.id, serialNos: ['S-3', 'S-1'], qty: 2 }]).expect(201);
      expect(res.body.data.lines.map((l: Record<string, unknown>) => [l.locationId, l.qtyDelta, [...(l.serialNos as string[])].sort()])).toEqual([
        [b1.id, -2, ['S-1', 'S-3']],
        [b2.id, 2, ['S-1', 'S-3']],
      ]);
      expect(await serials()).toEqual({ 'S-1': [b2.id, 'AVAILABLE', true], 'S-2': [b1.id, 'AVAILABLE', true], 'S-3': [b2.id, 'AVAILABLE', true] });

      // A status move takes the serial's status with it.
      await move(t, [{ itemId: f.item.id, fromLocationId: b2.id, toStatusId: f.status('DAMAGED'), serialNos: ['S-1'], qty: 1 }]).expect(201);
      expect((await serials())['S-1']).toEqual([b2.id, 'DAMAGED', true]);

      // Serial numbers: one per unit, and each in stock at the source location and status.
      const count = await move(t, [{ itemId: f.item.id, fromLocationId: b1.id, toLocationId: b2.id, serialNos: ['S-2'], qty: 2 }]).expect(400);
      expect(count.body.details).toEqual([expect.objectContaining({ field: 'lines[0].serialNos' })]);
      const none = await move(t, [{ itemId: f.item.id, fromLocationId: b1.id, toLocationId: b2.id, qty: 1 }]).expect(400);
      expect(none.body.details).toEqual([expect.objectContaining({ field: 'lines[0].serialNos' })]);
      // S-3 is at b2 now; S-1 is at b2 but DAMAGED.
      const elsewhere = await move(t, [{ itemId: f.item.id, fromLocationId: b1.id, toLocationId: b2.id, serialNos: ['S-3'], qty: 1 }]).expect(400);
      expect(elsewhere.body.details).toEqual([expect.objectContaining({ field: 'lines[0].serialNos', message: expect.stringContaining('S-3') })]);
      const otherStatus = await move(t, [{ itemId: f.item.id, fromLocationId: b2.id, toLocationId: b1.id, serialNos: ['S-1'], qty: 1 }]).expect(400);
      expect(otherStatus.body.details).toEqual([expect.objectContaining({ field: 'lines[0].serialNos' })]);
      expect(await serials()).toEqual({ 'S-1': [b2.id, 'DAMAGED', true], 'S-2': [b1.id, 'AVAILABLE', true], 'S-3': [b2.id, 'AVAILABLE', true] });
      expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
    });
  });

  it('quarantine release (QUARANTINE → AVAILABLE) raises available-to-promise', async () => {
    const { t, f } = await stocked(0);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 12, statusId: f.status('QUARANTINE') });
    expect(await atp(t, f)).toBe(0);
    expect((await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 1 }).expect(409)).body.error).toBe('insufficient_stock');
    await move(t, [{ itemId: f.item.id, fromLocationId: f.location.id, fromStatusId: f.status('QUARANTINE'), toStatusId: f.status('AVAILABLE'), qty: 12 }], { reason: 'QA passed' }).expect(201);
    expect(await atp(t, f)).toBe(12);
    await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 12 }).expect(201);
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it('permissions: inventory:write', async () => {
    const { t, f } = await stocked(10);
    const body = { lines: [{ itemId: f.item.id, fromLocationId: f.locations[0].id, toLocationId: f.locations[1].id, qty: 1 }] };
    const as = async (permissions: string[]) => {
      const token = await ctx.idp.token({ tenantId: t.tenantId, permissions });
      return ctx.http.post(MOVES).set('Authorization', `Bearer ${token}`).send(body);
    };
    expect((await as(['inventory:read', 'catalog:write'])).status).toBe(403);
    expect((await as(['inventory:write'])).status).toBe(201);
    expect((await ctx.http.post(MOVES).send(body)).status).toBe(401);
  });

  it("tenant isolation: another tenant's items, locations and statuses are unknown (404 naming the field)", async () => {
    const mine = await stocked(10);
    const theirs = await stocked(10);
    const ok = { itemId: mine.f.item.id, fromLocationId: mine.f.locations[0].id, toLocationId: mine.f.locations[1].id, qty: 1 };
    for (const [key, value] of [
      ['itemId', theirs.f.item.id],
      ['fromLocationId', theirs.f.locations[0].id],
      ['toLocationId', theirs.f.locations[1].id],
      ['toStatusId', theirs.f.status('DAMAGED')],
    ]) {
      const res = await move(mine.t, [{ ...ok, [key]: value }]).expect(404);
      expect(res.body.details).toEqual([{ field: `lines[0].${key}`, message: 'not found' }]);
    }
    // Their whole line, in their ids: nothing of theirs moves.
    await move(mine.t, [{ itemId: theirs.f.item.id, fromLocationId: theirs.f.locations[0].id, toLocationId: theirs.f.locations[1].id, qty: 1 }]).expect(404);
    expect(await onHand(theirs.t, { itemId: theirs.f.item.id, locationId: theirs.f.locations[0].id })).toBe(10);
    const moved = (await move(mine.t, [ok]).expect(201)).body.data;
    await theirs.t.get(`/v1/inventory/transactions/${moved.id}`).expect(404);
    expect((await theirs.t.get('/v1/inventory/transactions?type=move').expect(200)).body.count).toBe(0);
  });

  it('20 parallel moves of 1 from a bin holding 10: exactly 10 × 201 and 10 × 409, and the ledger is whole', async () => {
    const { t, f } = await stocked(10);
    const [b1, b2, b3] = f.locations;
    // Half of them into another status, half to other bins: every kind of counter row under contention.
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        move(t, [{ itemId: f.item.id, fromLocationId: b1.id, ...(i % 2 ? { toLocationId: i % 4 === 1 ? b2.id : b3.id } : { toStatusId: f.status('DAMAGED') }), qty: 1 }]),
      ),
    );
    expect(statusCounts(results)).toEqual({ 201: 10, 409: 10 });
    for (const r of results.filter((x) => x.status === 409)) {
      expect(r.body).toMatchObject({ error: 'insufficient_stock', details: [expect.objectContaining({ field: 'lines[0].qty', requested: 1, available: 0 })] });
    }
    const balances = await sql(
      `SELECT b.location_id, st.code, b.qty_on_hand::float AS q FROM balances b JOIN stock_statuses st ON st.tenant_id = b.tenant_id AND st.id = b.status_id
        WHERE b.tenant_id = $1 AND b.qty_on_hand <> 0`,
      [t.tenantId],
    );
    const total = (where: (b: { location_id: string; code: string }) => boolean) =>
      balances.filter(where).reduce((s: number, b: { q: number }) => s + b.q, 0);
    expect(total((b) => b.location_id === b1.id && b.code === 'AVAILABLE')).toBe(0);
    expect(total(() => true)).toBe(10);
    const [lines] = await sql(
      `SELECT count(DISTINCT t.id)::int AS transactions, count(*)::int AS lines, coalesce(sum(l.qty_delta), 0)::float AS net
         FROM ledger_transactions t JOIN ledger_lines l ON l.tenant_id = t.tenant_id AND l.transaction_id = t.id
        WHERE t.tenant_id = $1 AND t.type = 'move'`,
      [t.tenantId],
    );
    expect(lines).toEqual({ transactions: 10, lines: 20, net: 0 });
    const [{ txns }] = await sql(`SELECT count(*)::int AS txns FROM ledger_transactions WHERE tenant_id = $1`, [t.tenantId]);
    expect(txns).toBe(11);
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });
});
