import { randomUUID } from 'node:crypto';
import { newTenant, startApp, Tenant, TestContext } from '../support/app';
import { adjust, inventoryFixture, lapseReservations, newItem, reservationIn, salesOrderIn, tenantWithStock } from '../support/fixtures';
import { auditFields, UUID, subOf } from '../support/matchers';

interface Reservation {
  id: string;
  reservationNo: string;
  status: string;
  qty: number;
  qtyAllocated: number;
  qtyFulfilled: number;
  expiresAt: string | null;
  version: number;
  allocations: Array<{ id: string; locationId: string; lotId: string | null; qty: number }>;
}

const R = '/v1/inventory/reservations';

const reserve = async (t: Tenant, body: Record<string, unknown>): Promise<Reservation> => (await t.post(R, body).expect(201)).body.data;
const read = async (t: Tenant, id: string): Promise<Reservation> => (await t.get(`${R}/${id}`).expect(200)).body.data;

/** [onHand, allocated, reserved, available] of (item, facility). */
async function atp(t: Tenant, itemId: string, facilityId: string): Promise<number[]> {
  const rows = (await t.get(`/v1/inventory/availability?itemId=${itemId}&facilityId=${facilityId}&groupBy=facility`).expect(200)).body.data;
  if (!rows.length) return [0, 0, 0, 0];
  expect(rows).toHaveLength(1);
  return [rows[0].qtyOnHand, rows[0].qtyAllocated, rows[0].qtyReserved, rows[0].qtyAvailable];
}

/** Balances of an item as `location[/lot]` → [onHand, allocated]. */
async function balances(t: Tenant, itemId: string, names: Record<string, string>): Promise<Record<string, number[]>> {
  const rows = (await t.get(`/v1/inventory/balances?itemId=${itemId}&limit=500`).expect(200)).body.data;
  return Object.fromEntries(
    rows.map((b: { locationId: string; lotNo: string | null; qtyOnHand: number; qtyAllocated: number }) => [
      `${names[b.locationId] ?? b.locationId}${b.lotNo ? `/${b.lotNo}` : ''}`,
      [b.qtyOnHand, b.qtyAllocated],
    ]),
  );
}

describe('inventory reservations', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  describe('create', () => {
    it('creates an open reservation with defaults, and with every field', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      const res = await t.post(R, { itemId: f.item.id, facilityId: f.facility.id, qty: 4 }).expect(201);
      expect(res.headers.etag).toBe('"1"');
      expect(res.body).toEqual({
        data: {
          id: expect.stringMatching(UUID),
          reservationNo: 'RS-000001',
          itemId: f.item.id,
          facilityId: f.facility.id,
          qty: 4,
          qtyAllocated: 0,
          qtyFulfilled: 0,
          status: 'open',
          demandType: 'manual',
          demandId: null,
          demandLineId: null,
          expiresAt: null,
          notes: null,
          allocations: [],
          ...auditFields(t.token),
        },
      });
      const again = await t.get(`${R}/${res.body.data.id}`).expect(200);
      expect(again.body).toEqual(res.body);
      expect(again.headers.etag).toBe('"1"');

      // A reservation against a document names an existing one of its type (CONTRACT §5).
      const demandId = (await salesOrderIn(t, 'draft', { facilityId: f.facility.id, itemId: f.item.id })).id;
      const demandLineId = randomUUID();
      const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
      const full = await reserve(t, {
        itemId: f.item.id, facilityId: f.facility.id, qty: 2, demandType: 'sales_order', demandId, demandLineId, expiresAt, notes: 'for SO 7',
      });
      expect(full).toMatchObject({ reservationNo: 'RS-000002', demandType: 'sales_order', demandId, demandLineId, expiresAt, notes: 'for SO 7', qty: 2 });
      expect(await atp(t, f.item.id, f.facility.id)).toEqual([10, 0, 6, 4]);
    });

    it('refuses a reservation beyond available-to-promise with 409 insufficient_stock', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 4 });
      const res = await t.post(R, { itemId: f.item.id, facilityId: f.facility.id, qty: 7 }).expect(409);
      expect(res.body).toMatchObject({ error: 'insufficient_stock', status: 409 });
      expect(res.body.details).toEqual([expect.objectContaining({ itemId: f.item.id, requested: 7, available: 6 })]);
      // Exactly the ATP is fine; then nothing is left.
      await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 6 });
      const none = await t.post(R, { itemId: f.item.id, facilityId: f.facility.id, qty: 1 }).expect(409);
      expect(none.body.details).toEqual([expect.objectContaining({ requested: 1, available: 0 })]);
      // Stock of another facility does not count.
      const other = await inventoryFixture(t, { items: [] });
      await t.post(R, { itemId: f.item.id, facilityId: other.facility.id, qty: 1 }).expect(409);
      // The refused ones were not numbered.
      const list = (await t.get(R).expect(200)).body;
      expect(list.data.map((r: Reservation) => r.reservationNo)).toEqual(['RS-000002', 'RS-000001']);
    });

    it('validates the request', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      const base = { itemId: f.item.id, facilityId: f.facility.id, qty: 1 };
      for (const [change, field] of [
        [{ qty: 0 }, 'qty'],
        [{ qty: -1 }, 'qty'],
        [{ qty: 1.5 }, 'qty'], // EA
        [{ demandType: 'whim' }, 'demandType'],
        [{ expiresAt: 'soon' }, 'expiresAt'],
        // expiresAt is an ISO 8601 string naming a real instant: not a number or boolean (read as 1970), not a
        // day that does not exist (rolled over to March), not a week date.
        [{ expiresAt: 4102444800000 }, 'expiresAt'],
        [{ expiresAt: true }, 'expiresAt'],
        [{ expiresAt: '2099-02-30T10:00:00Z' }, 'expiresAt'],
        [{ expiresAt: '2099-02-30' }, 'expiresAt'],
        [{ expiresAt: '2099-W05' }, 'expiresAt'],
        [{ expiresAt: '2099-06-01T10:00:00' }, 'expiresAt'], // a time without an offset names no instant
        [{ extra: true }, 'extra'],
      ] as Array<[Record<string, unknown>, string]>) {
        const res = await t.post(R, { ...base, ...change }).expect(400);
        expect(res.body).toMatchObject({ error: 'validation_failed', status: 400 });
        expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      }
      // A calendar date is a date-time at midnight UTC.
      const dated = await reserve(t, { ...base, expiresAt: '2099-12-31' });
      expect(dated.expiresAt).toBe('2099-12-31T00:00:00.000Z');
      await t.post(`${R}/${dated.id}/cancel`).expect(200);
      for (const field of ['itemId', 'facilityId']) {
        const res = await t.post(R, { ...base, [field]: randomUUID() }).expect(404);
        expect(res.body).toMatchObject({ error: 'not_found', details: [expect.objectContaining({ field })] });
      }
      const service = await newItem(t, f.uom('EA'), { itemKind: 'service' });
      await t.post(R, { ...base, itemId: service.id }).expect(400);
      const inactive = await newItem(t, f.uom('EA'));
      await adjust(t, { itemId: inactive.id, locationId: f.location.id, qtyDelta: 5 });
      await t.patch(`/v1/items/${inactive.id}`, { isActive: false }).expect(200);
      expect((await t.post(R, { ...base, itemId: inactive.id }).expect(409)).body).toMatchObject({ error: 'invalid_state' });
      const reader = await newTenant(ctx, ['inventory:read']);
      await reader.post(R, base).expect(403);
      expect((await t.get(R).expect(200)).body.count).toBe(0);
    });
  });

  describe('list and read', () => {
    it('lists open and allocated ones by default; filters by status, item, facility and demand', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t, { items: [{}, {}] });
      const [a, b] = f.items;
      const other = await inventoryFixture(t, { items: [] });
      for (const item of [a, b]) await adjust(t, { itemId: item.id, locationId: f.location.id, qtyDelta: 20 });
      await adjust(t, { itemId: a.id, locationId: other.location.id, qtyDelta: 20 });
      const demandId = (await salesOrderIn(t, 'draft', { facilityId: f.facility.id, itemId: a.id })).id;
      const open = await reserve(t, { itemId: a.id, facilityId: f.facility.id, qty: 1, demandType: 'sales_order', demandId });
      const allocated = await reservationIn(t, f, 'allocated', { item: a, qty: 2, stock: false, body: { demandId } });
      const released = await reservationIn(t, f, 'released', { item: b, qty: 3, stock: false });
      const cancelled = await reservationIn(t, f, 'cancelled', { item: b, qty: 4, stock: false });
      const elsewhere = await reserve(t, { itemId: a.id, facilityId: other.facility.id, qty: 5 });

      const ids = async (query: string) => {
        const body = (await t.get(`${R}?${query}`).expect(200)).body;
        expect(body.count).toBe(body.data.length);
        return body.data.map((r: Reservation) => r.id);
      };
      expect(await ids('')).toEqual([elsewhere.id, allocated.id, open.id]);
      expect(await ids('status=open')).toEqual([elsewhere.id, open.id]);
      expect(await ids('status=allocated')).toEqual([allocated.id]);
      expect(await ids('status=released')).toEqual([released.id]);
      expect(await ids('status=cancelled')).toEqual([cancelled.id]);
      expect(await ids('status=fulfilled')).toEqual([]);
      expect(await ids(`itemId=${b.id}`)).toEqual([]);
      expect(await ids(`itemId=${b.id}&status=cancelled`)).toEqual([cancelled.id]);
      expect(await ids(`facilityId=${other.facility.id}`)).toEqual([elsewhere.id]);
      expect(await ids(`demandId=${demandId}`)).toEqual([allocated.id, open.id]);
      const paged = (await t.get(`${R}?limit=1&offset=1`).expect(200)).body;
      expect(paged).toMatchObject({ count: 3, limit: 1, offset: 1 });
      expect(paged.data.map((r: Reservation) => r.id)).toEqual([allocated.id]);
      await t.get(`${R}?status=gone`).expect(400);

      // Any status reads by id.
      expect(await read(t, cancelled.id)).toMatchObject({ status: 'cancelled', qty: 4 });
      await t.get(`${R}/${randomUUID()}`).expect(404);
      await t.get(`${R}/not-a-uuid`).expect(404);
      const stranger = await newTenant(ctx);
      await stranger.get(`${R}/${open.id}`).expect(404);
      expect((await stranger.get(R).expect(200)).body.count).toBe(0);
    });
  });

  describe('update', () => {
    it('changes an open reservation: qty (re-checked against ATP, not below allocated), notes, expiresAt, with If-Match', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      const r = await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 4 });
      await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 3 }); // ATP left: 3

      const up = await t.patch(`${R}/${r.id}`, { qty: 7, notes: 'more' }).set('If-Match', '"1"').expect(200);
      expect(up.headers.etag).toBe('"2"');
      expect(up.body.data).toMatchObject({ qty: 7, notes: 'more', version: 2, status: 'open' });
      expect(await atp(t, f.item.id, f.facility.id)).toEqual([10, 0, 10, 0]);

      const beyond = await t.patch(`${R}/${r.id}`, { qty: 8 }).expect(409);
      expect(beyond.body).toMatchObject({ error: 'insufficient_stock', details: [expect.objectContaining({ requested: 1, available: 0 })] });
      const stale = await t.patch(`${R}/${r.id}`, { notes: 'late' }).set('If-Match', '"1"').expect(412);
      expect(stale.body).toMatchObject({ error: 'version_conflict', status: 412 });

      const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
      const changed = (await t.patch(`${R}/${r.id}`, { qty: 5, expiresAt }).expect(200)).body.data;
      expect(changed).toMatchObject({ qty: 5, expiresAt, notes: 'more', version: 3 });
      expect(await atp(t, f.item.id, f.facility.id)).toEqual([10, 0, 8, 2]);
      const cleared = (await t.patch(`${R}/${r.id}`, { expiresAt: null, notes: null }).expect(200)).body.data;
      expect(cleared).toMatchObject({ expiresAt: null, notes: null, qty: 5, version: 4 });

      // Partly allocated (still open): qty may not go below what is allocated.
      await t.post(`${R}/${r.id}/allocate`, { allocations: [{ locationId: f.location.id, qty: 3 }] }).expect(200);
      const below = await t.patch(`${R}/${r.id}`, { qty: 2 }).expect(400);
      expect(below.body).toMatchObject({ error: 'validation_failed', details: [expect.objectContaining({ field: 'qty' })] });
      for (const body of [{ qty: 0 }, { qty: 1.5 }, { status: 'allocated' }, { expiresAt: 1 }, { expiresAt: '2099-02-30T00:00:00Z' }]) {
        await t.patch(`${R}/${r.id}`, body).expect(400);
      }
      // qty is optional but not nullable: null is qty left out (CONTRACT §1), never the arithmetic's 500.
      expect((await t.patch(`${R}/${r.id}`, { qty: null }).expect(200)).body.data).toMatchObject({ qty: 5, qtyAllocated: 3, version: 6 });

      // Allocated in full: no longer open, so no PATCH.
      await t.post(`${R}/${r.id}/allocate`).expect(200);
      const locked = await t.patch(`${R}/${r.id}`, { notes: 'x' }).expect(409);
      expect(locked.body).toMatchObject({ error: 'invalid_state' });
      expect(locked.body.message).toContain('allocated');
      await t.patch(`${R}/${randomUUID()}`, { notes: 'x' }).expect(404);
    });
  });

  describe('allocate', () => {
    it('allocates automatically: earliest expiry first, then oldest lot, then location code', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t, { items: [], locations: 0 });
      // Locations created in the opposite order of their codes, so creation order cannot pass for code order.
      const c2 = (await t.post(`/v1/facilities/${f.facility.id}/locations`, { code: 'C-2', name: 'C2' }).expect(201)).body.data;
      const c1 = (await t.post(`/v1/facilities/${f.facility.id}/locations`, { code: 'C-1', name: 'C1' }).expect(201)).body.data;
      const names: Record<string, string> = { [c1.id]: 'C1', [c2.id]: 'C2' };
      const item = await newItem(t, f.uom('EA'), { lotTracking: 'required' });
      const post = (locationId: string, lotNo: string, qtyDelta: number, expiryDate?: string) =>
        adjust(t, { itemId: item.id, locationId, qtyDelta, lotNo, ...(expiryDate ? { expiryDate } : {}) });
      await post(c1.id, 'NOEXP', 1); // oldest lot, but no expiry: last
      await post(c1.id, 'LATE', 5, '2031-01-01');
      await post(c2.id, 'EARLY', 3, '2030-01-01'); // balance at C-2 created before the one at C-1
      await post(c1.id, 'EARLY', 2);
      await post(c1.id, 'EARLY2', 4, '2030-01-01'); // same expiry as EARLY, newer lot
      const lots = Object.fromEntries(
        (await t.get(`/v1/inventory/lots?itemId=${item.id}`).expect(200)).body.data.map((l: { lotNo: string; id: string }) => [l.lotNo, l.id]),
      );

      const r = await reserve(t, { itemId: item.id, facilityId: f.facility.id, qty: 8 });
      const allocated = (await t.post(`${R}/${r.id}/allocate`).expect(200)).body.data;
      expect(allocated).toMatchObject({ status: 'allocated', qtyAllocated: 8, version: 2 });
      const pins = (await t.get(`/v1/inventory/allocations?reservationId=${r.id}`).expect(200)).body;
      expect(pins.count).toBe(3);
      const shape = (a: { locationId: string; lotId: string | null; qty: number }) => `${names[a.locationId]}/${a.lotId}=${a.qty}`;
      const expected = [`C1/${lots.EARLY}=2`, `C2/${lots.EARLY}=3`, `C1/${lots.EARLY2}=3`].sort();
      expect(pins.data.map(shape).sort()).toEqual(expected);
      expect(allocated.allocations.map(shape).sort()).toEqual(expected);
      expect(pins.data[0]).toEqual({ id: expect.stringMatching(UUID), reservationId: r.id, itemId: item.id, locationId: expect.any(String), lotId: expect.any(String), qty: expect.any(Number) });
      expect(await balances(t, item.id, names)).toEqual({
        'C1/EARLY': [2, 2],
        'C1/EARLY2': [4, 3],
        'C1/LATE': [5, 0],
        'C1/NOEXP': [1, 0],
        'C2/EARLY': [3, 3],
      });
      expect(await atp(t, item.id, f.facility.id)).toEqual([15, 8, 0, 7]);

      // The next reservation takes what is left in the same order: EARLY2 at C-1, then LATE.
      const r2 = await reserve(t, { itemId: item.id, facilityId: f.facility.id, qty: 3 });
      const second = (await t.post(`${R}/${r2.id}/allocate`).expect(200)).body.data;
      expect(second.allocations.map(shape).sort()).toEqual([`C1/${lots.EARLY2}=1`, `C1/${lots.LATE}=2`].sort());
      const byLocation = (await t.get(`/v1/inventory/allocations?locationId=${c2.id}`).expect(200)).body;
      expect(byLocation.data.map(shape)).toEqual([`C2/${lots.EARLY}=3`]);
      expect((await t.get(`/v1/inventory/allocations?itemId=${item.id}`).expect(200)).body.count).toBe(5);
    });

    it('pins explicitly: a partial allocation stays open, a full one is allocated', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const [b1, b2] = f.locations;
      await adjust(t, { itemId: f.item.id, locationId: b1.id, qtyDelta: 4 });
      await adjust(t, { itemId: f.item.id, locationId: b2.id, qtyDelta: 6 });
      const r = await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 5 });
      const partial = (await t.post(`${R}/${r.id}/allocate`, { allocations: [{ locationId: b2.id, qty: 2 }] }).expect(200)).body.data;
      expect(partial).toMatchObject({ status: 'open', qtyAllocated: 2, allocations: [{ locationId: b2.id, lotId: null, qty: 2, reservationId: r.id }] });
      expect(await atp(t, f.item.id, f.facility.id)).toEqual([10, 2, 3, 5]);
      // Fulfilment needs the whole reservation allocated.
      expect((await t.post(`${R}/${r.id}/fulfill`).expect(409)).body).toMatchObject({ error: 'invalid_state' });
      const full = (await t.post(`${R}/${r.id}/allocate`, { allocations: [{ locationId: b1.id, qty: 3 }] }).expect(200)).body.data;
      expect(full).toMatchObject({ status: 'allocated', qtyAllocated: 5 });
      expect(full.allocations).toHaveLength(2);
      expect(await balances(t, f.item.id, { [b1.id]: 'B1', [b2.id]: 'B2' })).toEqual({ B1: [4, 3], B2: [6, 2] });
      expect(await atp(t, f.item.id, f.facility.id)).toEqual([10, 5, 0, 5]);
      // Allocated is not open: no more allocation.
      expect((await t.post(`${R}/${r.id}/allocate`).expect(409)).body).toMatchObject({ error: 'invalid_state' });
    });

    it('refuses pins at another facility (400), beyond the free stock at the balance (409) and beyond the remainder (400)', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const other = await inventoryFixture(t, { items: [], locations: 1 });
      const [b1, b2] = f.locations;
      await adjust(t, { itemId: f.item.id, locationId: b1.id, qtyDelta: 10 });
      await adjust(t, { itemId: f.item.id, locationId: b2.id, qtyDelta: 3 });
      await adjust(t, { itemId: f.item.id, locationId: other.location.id, qtyDelta: 9 });
      const r = await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 5 });
      const allocate = (allocations: unknown[], status: number) => t.post(`${R}/${r.id}/allocate`, { allocations }).expect(status);

      const foreign = await allocate([{ locationId: other.location.id, qty: 1 }], 400);
      expect(foreign.body).toMatchObject({ error: 'validation_failed', details: [expect.objectContaining({ field: 'allocations[0].locationId' })] });
      const short = await allocate([{ locationId: b2.id, qty: 4 }], 409);
      expect(short.body).toMatchObject({ error: 'insufficient_stock' });
      const over = await allocate([{ locationId: b1.id, qty: 6 }], 400);
      expect(over.body).toMatchObject({ error: 'validation_failed' });
      const overSplit = await allocate([{ locationId: b1.id, qty: 3 }, { locationId: b2.id, qty: 3 }], 400);
      expect(overSplit.body).toMatchObject({ error: 'validation_failed' });
      const unknown = await allocate([{ locationId: randomUUID(), qty: 1 }], 404);
      expect(unknown.body.details).toEqual([expect.objectContaining({ field: 'allocations[0].locationId' })]);
      await allocate([{ locationId: b1.id, lotId: randomUUID(), qty: 1 }], 400); // not lot-tracked
      await allocate([{ locationId: b1.id, qty: 0 }], 400);
      await allocate([], 400);
      // A nested array is not a pin (it used to be read as one with no locationId: a wrong 404).
      const nested = await allocate([[{ locationId: b1.id, qty: 1 }]], 400);
      expect(nested.body).toMatchObject({ error: 'validation_failed', details: [{ field: 'allocations', message: 'must contain only objects' }] });

      // Stock allocated to another reservation is not free either.
      const r2 = await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 2 });
      await t.post(`${R}/${r2.id}/allocate`, { allocations: [{ locationId: b2.id, qty: 2 }] }).expect(200);
      await allocate([{ locationId: b2.id, qty: 2 }], 409);

      // Nothing was pinned by the refused requests.
      expect(await read(t, r.id)).toMatchObject({ status: 'open', qtyAllocated: 0, allocations: [], version: 1 });
      expect(await balances(t, f.item.id, { [b1.id]: 'B1', [b2.id]: 'B2', [other.location.id]: 'O1' })).toEqual({ B1: [10, 0], B2: [3, 2], O1: [9, 0] });
      await allocate([{ locationId: b2.id, qty: 1 }, { locationId: b1.id, qty: 4 }], 200);
      expect(await balances(t, f.item.id, { [b1.id]: 'B1', [b2.id]: 'B2', [other.location.id]: 'O1' })).toEqual({ B1: [10, 4], B2: [3, 3], O1: [9, 0] });
    });

    it('requires the lot of a lot-tracked item and checks If-Match', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t, { items: [{ lotTracking: 'required' }] });
      const lotId = (await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5, lotNo: 'A' })).body.data.lines[0].lotId;
      const r = await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 2 });
      const noLot = await t.post(`${R}/${r.id}/allocate`, { allocations: [{ locationId: f.location.id, qty: 2 }] }).expect(400);
      expect(noLot.body.details).toEqual([expect.objectContaining({ field: 'allocations[0].lotId' })]);
      const unknownLot = await t.post(`${R}/${r.id}/allocate`, { allocations: [{ locationId: f.location.id, lotId: randomUUID(), qty: 2 }] }).expect(404);
      expect(unknownLot.body).toMatchObject({ error: 'not_found', details: [expect.objectContaining({ field: 'allocations[0].lotId' })] });
      const otherItem = await newItem(t, f.uom('EA'), { lotTracking: 'required' });
      const otherLot = (await adjust(t, { itemId: otherItem.id, locationId: f.location.id, qtyDelta: 5, lotNo: 'A' })).body.data.lines[0].lotId;
      const foreignLot = await t.post(`${R}/${r.id}/allocate`, { allocations: [{ locationId: f.location.id, lotId: otherLot, qty: 2 }] }).expect(400);
      expect(foreignLot.body).toMatchObject({ error: 'validation_failed', details: [expect.objectContaining({ field: 'allocations[0].lotId' })] });
      await t.post(`${R}/${r.id}/allocate`, { allocations: [{ locationId: f.location.id, lotId, qty: 2 }] }).set('If-Match', '"7"').expect(412);
      const ok = await t.post(`${R}/${r.id}/allocate`, { allocations: [{ locationId: f.location.id, lotId, qty: 2 }] }).set('If-Match', '"1"').expect(200);
      expect(ok.headers.etag).toBe('"2"');
      expect(ok.body.data).toMatchObject({ status: 'allocated', allocations: [{ lotId, qty: 2 }] });
    });
  });

  describe('release, cancel, fulfil', () => {
    it('fulfil honours If-Match: a stale version changes nothing', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      const r = await reservationIn(t, f, 'allocated', { qty: 3, stock: false });
      const stale = await t.post(`${R}/${r.id}/fulfill`).set('If-Match', `"${r.version - 1}"`).expect(412);
      expect(stale.body).toMatchObject({ error: 'version_conflict', status: 412 });
      expect(await read(t, r.id)).toMatchObject({ status: 'allocated', qtyFulfilled: 0, version: r.version });
      expect((await t.get(`/v1/inventory/transactions?sourceId=${r.id}`).expect(200)).body.count).toBe(0);
      const done = (await t.post(`${R}/${r.id}/fulfill`).set('If-Match', `"${r.version}"`).expect(200)).body.data;
      expect(done).toMatchObject({ status: 'fulfilled', qtyFulfilled: 3, version: r.version + 1 });
    });

    it.each(['release', 'cancel'])('%s frees everything held and is final', async (action) => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const [b1, b2] = f.locations;
      const names = { [b1.id]: 'B1', [b2.id]: 'B2' };
      await adjust(t, { itemId: f.item.id, locationId: b1.id, qtyDelta: 5 });
      await adjust(t, { itemId: f.item.id, locationId: b2.id, qtyDelta: 5 });
      const r = await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 8 });
      await t.post(`${R}/${r.id}/allocate`, { allocations: [{ locationId: b1.id, qty: 4 }, { locationId: b2.id, qty: 2 }] }).expect(200);
      expect(await atp(t, f.item.id, f.facility.id)).toEqual([10, 6, 2, 2]);

      const done = (await t.post(`${R}/${r.id}/${action}`).expect(200)).body.data;
      expect(done).toMatchObject({ status: action === 'release' ? 'released' : 'cancelled', qtyAllocated: 0, qtyFulfilled: 0, allocations: [], version: 3 });
      expect(await balances(t, f.item.id, names)).toEqual({ B1: [5, 0], B2: [5, 0] });
      expect(await atp(t, f.item.id, f.facility.id)).toEqual([10, 0, 0, 10]);
      expect((await t.get(`/v1/inventory/allocations?reservationId=${r.id}`).expect(200)).body).toMatchObject({ count: 0, data: [] });
      expect((await t.get(`/v1/inventory/availability?itemId=${f.item.id}`).expect(200)).body.data.map((a: { qtyAvailable: number }) => a.qtyAvailable)).toEqual([5, 5]);

      for (const next of ['allocate', 'release', 'cancel', 'fulfill']) {
        const res = await t.post(`${R}/${r.id}/${next}`).expect(409);
        expect(res.body).toMatchObject({ error: 'invalid_state' });
      }
      await t.patch(`${R}/${r.id}`, { notes: 'x' }).expect(409);
      expect(await read(t, r.id)).toMatchObject({ status: done.status, version: 3 });
      // The stock is free for others.
      await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 10 });
    });

    it('releases an open reservation that holds no allocations', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 5 });
      const r = await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 5 });
      expect(await atp(t, f.item.id, f.facility.id)).toEqual([5, 0, 5, 0]);
      await t.post(`${R}/${r.id}/release`).expect(200);
      expect(await atp(t, f.item.id, f.facility.id)).toEqual([5, 0, 0, 5]);
      await t.post(`${R}/${randomUUID()}/release`).expect(404);
      await t.post(`${R}/nope/release`).expect(404);
    });

    it('fulfils only an allocated reservation, posting a fulfillment transaction', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const [b1, b2] = f.locations;
      const names = { [b1.id]: 'B1', [b2.id]: 'B2' };
      await adjust(t, { itemId: f.item.id, locationId: b1.id, qtyDelta: 5 });
      await adjust(t, { itemId: f.item.id, locationId: b2.id, qtyDelta: 5 });
      const r = await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 7 });
      const open = await t.post(`${R}/${r.id}/fulfill`).expect(409);
      expect(open.body).toMatchObject({ error: 'invalid_state' });
      expect(open.body.message).toContain('open');
      await t.post(`${R}/${r.id}/allocate`).expect(200); // B-1 5, B-2 2 (location code order)
      const done = (await t.post(`${R}/${r.id}/fulfill`).expect(200)).body.data;
      expect(done).toMatchObject({ status: 'fulfilled', qty: 7, qtyAllocated: 0, qtyFulfilled: 7, allocations: [], version: 3 });

      const txns = (await t.get(`/v1/inventory/transactions?sourceId=${r.id}`).expect(200)).body;
      expect(txns.count).toBe(1);
      expect(txns.data[0]).toMatchObject({
        txnNo: 'TX-000003',
        type: 'fulfillment',
        sourceType: 'reservation',
        sourceId: r.id,
        postedBy: subOf(t.token),
        lines: [
          { lineNo: 1, itemId: f.item.id, locationId: b1.id, qtyDelta: -5 },
          { lineNo: 2, itemId: f.item.id, locationId: b2.id, qtyDelta: -2 },
        ],
      });
      expect(await balances(t, f.item.id, names)).toEqual({ B2: [3, 0] });
      expect(await atp(t, f.item.id, f.facility.id)).toEqual([3, 0, 0, 3]);
      expect((await t.get(`/v1/inventory/allocations?reservationId=${r.id}`).expect(200)).body.count).toBe(0);
      // Final.
      for (const next of ['fulfill', 'release', 'cancel', 'allocate']) await t.post(`${R}/${r.id}/${next}`).expect(409);
      expect((await t.get(`/v1/inventory/transactions?sourceId=${r.id}`).expect(200)).body.count).toBe(1);
      expect((await t.get(`${R}?status=fulfilled`).expect(200)).body.data.map((x: Reservation) => x.id)).toEqual([r.id]);
    });

    it('picks serials automatically when fulfilling a serial-tracked reservation', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t, { items: [{ serialTracking: 'required' }] });
      await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 3, serialNos: ['SN-C', 'SN-A', 'SN-B'] });
      const r = await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 2 });
      await t.post(`${R}/${r.id}/allocate`).expect(200);
      await t.post(`${R}/${r.id}/fulfill`).expect(200);
      const serials = (await t.get(`/v1/inventory/serials?itemId=${f.item.id}`).expect(200)).body.data;
      expect(serials.map((s: { serialNo: string; inStock: boolean }) => [s.serialNo, s.inStock])).toEqual([
        ['SN-A', false],
        ['SN-B', false],
        ['SN-C', true],
      ]);
      const txn = (await t.get(`/v1/inventory/transactions?sourceId=${r.id}`).expect(200)).body.data[0];
      expect(await ctx.db.query(`SELECT serial_nos FROM ledger_lines WHERE transaction_id = $1`, [txn.id])).toEqual([{ serial_nos: ['SN-A', 'SN-B'] }]);
      expect((await t.get(`/v1/inventory/balances?itemId=${f.item.id}`).expect(200)).body.data).toEqual([expect.objectContaining({ qtyOnHand: 1, qtyAllocated: 0 })]);
    });
  });

  describe('holds against adjustments', () => {
    it('refuses a negative adjustment below a balance’s allocated quantity until the hold is released', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const [b1] = f.locations;
      await adjust(t, { itemId: f.item.id, locationId: b1.id, qtyDelta: 10 });
      const r = await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 4 });
      await t.post(`${R}/${r.id}/allocate`).expect(200);
      const res = await adjust(t, { itemId: f.item.id, locationId: b1.id, qtyDelta: -7 }, 409);
      expect(res.body).toMatchObject({ error: 'insufficient_stock' });
      expect(res.body.details).toEqual([expect.objectContaining({ itemId: f.item.id, locationId: b1.id, requested: 7, available: 6 })]);
      await adjust(t, { itemId: f.item.id, locationId: b1.id, qtyDelta: -6 });
      await adjust(t, { itemId: f.item.id, locationId: b1.id, qtyDelta: -1 }, 409);
      await t.post(`${R}/${r.id}/release`).expect(200);
      await adjust(t, { itemId: f.item.id, locationId: b1.id, qtyDelta: -4 });
      expect((await t.get(`/v1/inventory/balances?itemId=${f.item.id}`).expect(200)).body.count).toBe(0);
    });

    it('refuses a negative adjustment leaving the facility short of allocated + reserved (invariant 4)', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const [b1, b2] = f.locations;
      await adjust(t, { itemId: f.item.id, locationId: b1.id, qtyDelta: 10 });
      await adjust(t, { itemId: f.item.id, locationId: b2.id, qtyDelta: 5 });
      const allocated = await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 4 });
      await t.post(`${R}/${allocated.id}/allocate`, { allocations: [{ locationId: b1.id, qty: 4 }] }).expect(200);
      const open = await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 8 });
      expect(await atp(t, f.item.id, f.facility.id)).toEqual([15, 4, 8, 3]);

      // B-2 has 5 and nothing allocated there, but the facility would keep 11 for 12 promised.
      const res = await adjust(t, { itemId: f.item.id, locationId: b2.id, qtyDelta: -4 }, 409);
      expect(res.body).toMatchObject({ error: 'insufficient_stock' });
      expect(res.body.details).toEqual([expect.objectContaining({ itemId: f.item.id, locationId: b2.id, requested: 4, available: 3 })]);
      await adjust(t, { itemId: f.item.id, locationId: b2.id, qtyDelta: -3 });
      expect(await atp(t, f.item.id, f.facility.id)).toEqual([12, 4, 8, 0]);
      await adjust(t, { itemId: f.item.id, locationId: b2.id, qtyDelta: -1 }, 409);
      // Stock in a non-available status is not part of the promise: it may go.
      await adjust(t, { itemId: f.item.id, locationId: b2.id, qtyDelta: 2, statusId: f.status('DAMAGED') });
      await adjust(t, { itemId: f.item.id, locationId: b2.id, qtyDelta: -2, statusId: f.status('DAMAGED') });

      await t.post(`${R}/${open.id}/release`).expect(200);
      await adjust(t, { itemId: f.item.id, locationId: b2.id, qtyDelta: -2 });
      expect(await atp(t, f.item.id, f.facility.id)).toEqual([10, 4, 0, 6]);
      expect((await t.get(`/v1/inventory/balances?itemId=${f.item.id}`).expect(200)).body.data).toEqual([
        expect.objectContaining({ locationId: b1.id, qtyOnHand: 10, qtyAllocated: 4 }),
      ]);
    });
  });

  describe('expiry', () => {
    it('stops holding stock once expiresAt has passed and reads as released', async () => {
      // The test's clock: the holds are created an hour ahead and their expires_at then moved into the past
      // by SQL (the database's now() decides what has lapsed), so no window has to pass on a loaded machine.
      const lapse = async (ids: string[]) => expect(await lapseReservations(ctx.db, ids)).toBe(ids.length);
      // Tenant B's reservation expires too; after it its first read is of balances, which must see it gone too.
      const b = await newTenant(ctx);
      const g = await inventoryFixture(b);
      await adjust(b, { itemId: g.item.id, locationId: g.location.id, qtyDelta: 5 });
      const bPinned = await reserve(b, { itemId: g.item.id, facilityId: g.facility.id, qty: 5, expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
      await b.post(`${R}/${bPinned.id}/allocate`).expect(200);

      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
      const open = await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 3, expiresAt });
      const pinned = await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 2, expiresAt });
      await t.post(`${R}/${pinned.id}/allocate`).expect(200);
      const keeper = await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 1 });

      // Before expiry they hold stock.
      expect(await atp(t, f.item.id, f.facility.id)).toEqual([10, 2, 4, 4]);
      await t.post(R, { itemId: f.item.id, facilityId: f.facility.id, qty: 5 }).expect(409);
      expect(await read(t, open.id)).toMatchObject({ status: 'open', expiresAt });

      await lapse([bPinned.id, open.id, pinned.id]);
      expect((await read(t, open.id)).status).toBe('released');
      expect(await read(t, pinned.id)).toMatchObject({ status: 'released', qtyAllocated: 0, allocations: [] });
      const released = (await t.get(`${R}?status=released`).expect(200)).body.data.map((r: Reservation) => r.id).sort();
      expect(released).toEqual([open.id, pinned.id].sort());
      expect((await t.get(R).expect(200)).body.data.map((r: Reservation) => r.id)).toEqual([keeper.id]);
      expect(await atp(t, f.item.id, f.facility.id)).toEqual([10, 0, 1, 9]);
      expect((await t.get(`/v1/inventory/allocations?itemId=${f.item.id}`).expect(200)).body.count).toBe(0);
      await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 9 });
      await t.post(`${R}/${open.id}/allocate`).expect(409);

      expect((await b.get(`/v1/inventory/balances?itemId=${g.item.id}`).expect(200)).body.data).toEqual([
        expect.objectContaining({ qtyOnHand: 5, qtyAllocated: 0 }),
      ]);
      expect(await read(b, bPinned.id)).toMatchObject({ status: 'released' });
    });

    it('treats an expiresAt already past as expired at once, on create and on PATCH', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      const past = new Date(Date.now() - 1000).toISOString();
      const created = await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 4, expiresAt: past });
      expect(created).toMatchObject({ status: 'released', expiresAt: past, qty: 4 });
      expect(await atp(t, f.item.id, f.facility.id)).toEqual([10, 0, 0, 10]);

      const r = await reserve(t, { itemId: f.item.id, facilityId: f.facility.id, qty: 6 });
      await t.post(`${R}/${r.id}/allocate`, { allocations: [{ locationId: f.location.id, qty: 2 }] }).expect(200);
      expect(await atp(t, f.item.id, f.facility.id)).toEqual([10, 2, 4, 4]);
      const patched = (await t.patch(`${R}/${r.id}`, { expiresAt: past }).expect(200)).body.data;
      expect(patched).toMatchObject({ status: 'released', qtyAllocated: 0, allocations: [] });
      expect(await atp(t, f.item.id, f.facility.id)).toEqual([10, 0, 0, 10]);
      expect((await t.get(`/v1/inventory/balances?itemId=${f.item.id}`).expect(200)).body.data).toEqual([
        expect.objectContaining({ qtyOnHand: 10, qtyAllocated: 0 }),
      ]);
    });
  });
});
