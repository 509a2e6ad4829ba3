import { randomUUID } from 'node:crypto';
import { newTenant, startApp, Tenant, TestContext } from '../support/app';
import { adjust, facilityWithLocations, inventoryFixture, newItem } from '../support/fixtures';
import { sleep } from '../support/matchers';

type Fixture = Awaited<ReturnType<typeof inventoryFixture>>;
interface Txn {
  id: string;
  txnNo: string;
  type: string;
  postedAt: string;
  sourceId: string | null;
  lines: Array<{ lineNo: number; itemId: string; locationId: string; qtyDelta: number }>;
}

const list = async (t: Tenant, url: string) => (await t.get(url).expect(200)).body;

describe('inventory stock queries', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  describe('balances', () => {
    let t: Tenant;
    let f: Fixture;
    let f2: Awaited<ReturnType<typeof facilityWithLocations>>;
    let plain: { id: string; itemNo: string };
    let lotted: { id: string; itemNo: string };
    let lot1: string;
    let lot2: string;

    beforeAll(async () => {
      t = await newTenant(ctx);
      f = await inventoryFixture(t);
      f2 = await facilityWithLocations(t, 1);
      plain = f.item;
      lotted = await newItem(t, f.uom('EA'), { lotTracking: 'required', expiryTracking: 'required' });
      const [b1, b2] = f.locations;
      await adjust(t, { itemId: plain.id, locationId: b1.id, qtyDelta: 10 });
      await adjust(t, { itemId: plain.id, locationId: b2.id, qtyDelta: 4 });
      await adjust(t, { itemId: plain.id, locationId: b1.id, qtyDelta: 3, statusId: f.status('QUARANTINE') });
      await adjust(t, { itemId: plain.id, locationId: f2.location.id, qtyDelta: 7 });
      lot1 = (await adjust(t, { itemId: lotted.id, locationId: b1.id, qtyDelta: 5, lotNo: 'L1', expiryDate: '2030-01-01' })).body.data.lines[0].lotId;
      lot2 = (await adjust(t, { itemId: lotted.id, locationId: b1.id, qtyDelta: 2, lotNo: 'L2', expiryDate: '2029-06-30' })).body.data.lines[0].lotId;
    });

    it('returns one row per (item, location, lot, status) with item, lot and status details', async () => {
      const body = await list(t, `/v1/inventory/balances?itemId=${lotted.id}`);
      expect(body).toEqual({
        count: 2,
        limit: 50,
        offset: 0,
        nextCursor: null,
        data: [
          {
            itemId: lotted.id, itemNo: lotted.itemNo, facilityId: f.facility.id, locationId: f.locations[0].id,
            lotId: lot1, lotNo: 'L1', expiryDate: '2030-01-01', statusId: f.status('AVAILABLE'), statusCode: 'AVAILABLE',
            qtyOnHand: 5, qtyAllocated: 0,
          },
          {
            itemId: lotted.id, itemNo: lotted.itemNo, facilityId: f.facility.id, locationId: f.locations[0].id,
            lotId: lot2, lotNo: 'L2', expiryDate: '2029-06-30', statusId: f.status('AVAILABLE'), statusCode: 'AVAILABLE',
            qtyOnHand: 2, qtyAllocated: 0,
          },
        ],
      });
      const plainRows = await list(t, `/v1/inventory/balances?itemId=${plain.id}`);
      expect(plainRows.count).toBe(4);
      expect(plainRows.data[0]).toMatchObject({ itemNo: plain.itemNo, lotId: null, lotNo: null, expiryDate: null });
    });

    it('filters by itemId, facilityId, locationId, lotId and statusId', async () => {
      const key = (b: { itemId: string; locationId: string; statusCode: string; lotNo: string | null; qtyOnHand: number }) =>
        `${b.itemId === plain.id ? 'plain' : 'lotted'}@${b.locationId === f.locations[0].id ? 'B1' : b.locationId === f.locations[1].id ? 'B2' : 'X1'}/${b.statusCode}/${b.lotNo ?? '-'}=${b.qtyOnHand}`;
      const keys = async (query: string) => {
        const body = await list(t, `/v1/inventory/balances?${query}`);
        expect(body.count).toBe(body.data.length);
        return body.data.map(key).sort();
      };
      expect(await keys(`itemId=${plain.id}`)).toEqual(['plain@B1/AVAILABLE/-=10', 'plain@B1/QUARANTINE/-=3', 'plain@B2/AVAILABLE/-=4', 'plain@X1/AVAILABLE/-=7']);
      expect(await keys(`itemId=${plain.id}&facilityId=${f.facility.id}`)).toEqual(['plain@B1/AVAILABLE/-=10', 'plain@B1/QUARANTINE/-=3', 'plain@B2/AVAILABLE/-=4']);
      expect(await keys(`facilityId=${f2.facility.id}`)).toEqual(['plain@X1/AVAILABLE/-=7']);
      expect(await keys(`locationId=${f.locations[0].id}`)).toEqual([
        'lotted@B1/AVAILABLE/L1=5', 'lotted@B1/AVAILABLE/L2=2', 'plain@B1/AVAILABLE/-=10', 'plain@B1/QUARANTINE/-=3',
      ]);
      expect(await keys(`lotId=${lot2}`)).toEqual(['lotted@B1/AVAILABLE/L2=2']);
      expect(await keys(`statusId=${f.status('QUARANTINE')}`)).toEqual(['plain@B1/QUARANTINE/-=3']);
      expect(await keys(`statusId=${f.status('DAMAGED')}`)).toEqual([]);
      expect(await keys('')).toHaveLength(6);
    });

    it('omits a balance once it is back to zero', async () => {
      const [, b2] = f.locations;
      await adjust(t, { itemId: plain.id, locationId: b2.id, qtyDelta: -4 });
      expect(await list(t, `/v1/inventory/balances?locationId=${b2.id}`)).toMatchObject({ count: 0, data: [] });
      expect((await list(t, `/v1/inventory/balances?itemId=${plain.id}`)).count).toBe(3);
      expect(await list(t, `/v1/inventory/availability?locationId=${b2.id}`)).toMatchObject({ count: 0, data: [] });
      await adjust(t, { itemId: plain.id, locationId: b2.id, qtyDelta: 4 });
      expect((await list(t, `/v1/inventory/balances?locationId=${b2.id}`)).data).toEqual([expect.objectContaining({ qtyOnHand: 4 })]);
    });

    it('answers 400 to a malformed filter and 403 without inventory:read', async () => {
      await t.get('/v1/inventory/balances?itemId=nope').expect(400);
      const writer = await newTenant(ctx, ['inventory:write']);
      await writer.get('/v1/inventory/balances').expect(403);
    });
  });

  describe('availability', () => {
    it('counts Available statuses only, per location and per facility', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const f2 = await facilityWithLocations(t, 1);
      const [b1, b2] = f.locations;
      const item = f.item.id;
      await adjust(t, { itemId: item, locationId: b1.id, qtyDelta: 10 });
      await adjust(t, { itemId: item, locationId: b1.id, qtyDelta: 3, statusId: f.status('QUARANTINE') });
      await adjust(t, { itemId: item, locationId: b2.id, qtyDelta: 2, statusId: f.status('DAMAGED') });
      await adjust(t, { itemId: item, locationId: f2.location.id, qtyDelta: 7 });

      const byLocation = await list(t, `/v1/inventory/availability?itemId=${item}`);
      // B-2 holds only DAMAGED stock: no availability row at all.
      expect(byLocation).toEqual({
        count: 2, limit: 50, offset: 0, nextCursor: null,
        data: [
          { itemId: item, facilityId: f.facility.id, locationId: b1.id, qtyOnHand: 10, qtyAllocated: 0, qtyAvailable: 10 },
          { itemId: item, facilityId: f2.facility.id, locationId: f2.location.id, qtyOnHand: 7, qtyAllocated: 0, qtyAvailable: 7 },
        ], // ordered by item number, then location path: B-1 before D-1
      });
      expect((await list(t, `/v1/inventory/availability?facilityId=${f2.facility.id}`)).data).toEqual([
        { itemId: item, facilityId: f2.facility.id, locationId: f2.location.id, qtyOnHand: 7, qtyAllocated: 0, qtyAvailable: 7 },
      ]);
      expect((await list(t, `/v1/inventory/availability?locationId=${b1.id}`)).data).toEqual([
        { itemId: item, facilityId: f.facility.id, locationId: b1.id, qtyOnHand: 10, qtyAllocated: 0, qtyAvailable: 10 },
      ]);
      const byFacility = await list(t, `/v1/inventory/availability?itemId=${item}&facilityId=${f.facility.id}&groupBy=facility`);
      expect(byFacility).toEqual({
        count: 1, limit: 50, offset: 0, nextCursor: null,
        data: [{ itemId: item, facilityId: f.facility.id, qtyOnHand: 10, qtyAllocated: 0, qtyReserved: 0, qtyAvailable: 10 }],
      });
      expect((await list(t, `/v1/inventory/availability?itemId=${item}&groupBy=facility`)).count).toBe(2);
      await t.get('/v1/inventory/availability?groupBy=lot').expect(400);
    });

    it('pages per (item, location) in item-number then location order with a total count, searches with q, and leaves out what holds no stock', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t, { locations: 3, items: [{ itemNo: 'C-300', name: 'gamma bolt' }, { itemNo: 'A-100', name: 'alpha nut' }, { itemNo: 'B-200', name: 'beta washer' }, { itemNo: 'D-400', name: 'delta nut' }] });
      const [c, a, b, d] = f.items;
      const [l1, l2, l3] = f.locations;
      for (const [item, loc, qty] of [[c, l2, 3], [c, l1, 2], [a, l3, 5], [b, l1, 1], [d, l1, 4]] as const) {
        await adjust(t, { itemId: item.id, locationId: loc.id, qtyDelta: qty });
      }
      await adjust(t, { itemId: d.id, locationId: l1.id, qtyDelta: -4 }); // D-400 back to zero: no row
      await adjust(t, { itemId: b.id, locationId: l2.id, qtyDelta: 2, statusId: f.status('DAMAGED') }); // not Available: no row
      const all = await list(t, '/v1/inventory/availability?limit=2');
      expect(all.count).toBe(4);
      expect(all.data.map((r: { itemId: string; locationId: string; qtyOnHand: number }) => [r.itemId, r.locationId, r.qtyOnHand])).toEqual([
        [a.id, l3.id, 5], [b.id, l1.id, 1],
      ]);
      const next = await list(t, '/v1/inventory/availability?limit=2&offset=2');
      expect(next.count).toBe(4);
      // C-300 at both of its locations, in location (path) order
      expect(next.data.map((r: { itemId: string; locationId: string }) => [r.itemId, r.locationId])).toEqual([[c.id, l1.id], [c.id, l2.id]]);
      expect((await list(t, '/v1/inventory/availability?limit=2&offset=4')).data).toEqual([]);
      const nuts = await list(t, '/v1/inventory/availability?q=NUT');
      expect(nuts.count).toBe(1); // delta nut holds nothing any more
      expect(nuts.data.map((r: { itemId: string }) => r.itemId)).toEqual([a.id]);
      const atL1 = await list(t, `/v1/inventory/availability?locationId=${l1.id}&q=a`);
      expect(atL1.data.map((r: { itemId: string }) => r.itemId)).toEqual([b.id, c.id]);
      expect(atL1.count).toBe(2);
    });

    it('a cursor of either grouping pages on with after= alone: the cursor carries groupBy like its other filters', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t, { items: [{}, {}, {}] });
      const f2 = await facilityWithLocations(t, 1);
      for (const item of f.items) {
        await adjust(t, { itemId: item.id, locationId: f.location.id, qtyDelta: 2 });
        await adjust(t, { itemId: item.id, locationId: f2.location.id, qtyDelta: 3 });
      }
      for (const grouping of ['&groupBy=facility', '&groupBy=location', '']) {
        const all = await list(t, `/v1/inventory/availability?limit=500${grouping}`);
        expect(all.count).toBe(6);
        const first = await list(t, `/v1/inventory/availability?limit=4${grouping}`);
        expect(first.data).toEqual(all.data.slice(0, 4));
        const alone = await list(t, `/v1/inventory/availability?limit=4&after=${first.nextCursor}`);
        expect({ grouping, data: alone.data, nextCursor: alone.nextCursor }).toEqual({ grouping, data: all.data.slice(4), nextCursor: null });
        expect(await list(t, `/v1/inventory/availability?limit=4${grouping}&after=${first.nextCursor}`)).toEqual(alone);
      }
      // Another grouping than the cursor's: 400 naming after, as any other filter of another value.
      const byFacility = await list(t, '/v1/inventory/availability?limit=1&groupBy=facility');
      const byLocation = await list(t, '/v1/inventory/availability?limit=1');
      for (const url of [`groupBy=location&after=${byFacility.nextCursor}`, `groupBy=facility&after=${byLocation.nextCursor}`]) {
        const res = await t.get(`/v1/inventory/availability?${url}`).expect(400);
        expect(res.body.details.map((d: { field: string }) => d.field)).toEqual(['after']);
      }
    });

    it('follows every kind of posting and hold', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const [b1, b2] = f.locations;
      const item = f.item.id;
      const byLocation = async () =>
        Object.fromEntries(
          (await list(t, `/v1/inventory/availability?itemId=${item}`)).data.map(
            (r: { locationId: string; qtyOnHand: number; qtyAllocated: number; qtyAvailable: number }) => [
              r.locationId === b1.id ? 'B1' : 'B2',
              [r.qtyOnHand, r.qtyAllocated, r.qtyAvailable],
            ],
          ),
        );
      /** [onHand, allocated, reserved, available] of the facility. */
      const byFacility = async () => {
        const rows = (await list(t, `/v1/inventory/availability?itemId=${item}&groupBy=facility`)).data;
        expect(rows).toHaveLength(1);
        const r = rows[0];
        return [r.qtyOnHand, r.qtyAllocated, r.qtyReserved, r.qtyAvailable];
      };

      // Adjustment in.
      await adjust(t, { itemId: item, locationId: b1.id, qtyDelta: 20 });
      await adjust(t, { itemId: item, locationId: b2.id, qtyDelta: 5 });
      expect(await byLocation()).toEqual({ B1: [20, 0, 20], B2: [5, 0, 5] });
      expect(await byFacility()).toEqual([25, 0, 0, 25]);
      // Adjustment out.
      await adjust(t, { itemId: item, locationId: b2.id, qtyDelta: -3 });
      expect(await byLocation()).toEqual({ B1: [20, 0, 20], B2: [2, 0, 2] });
      expect(await byFacility()).toEqual([22, 0, 0, 22]);
      // Status move AVAILABLE → QUARANTINE of 4 at B-1: two adjustments.
      await adjust(t, { itemId: item, locationId: b1.id, qtyDelta: -4 });
      await adjust(t, { itemId: item, locationId: b1.id, qtyDelta: 4, statusId: f.status('QUARANTINE') });
      expect(await byLocation()).toEqual({ B1: [16, 0, 16], B2: [2, 0, 2] });
      expect(await byFacility()).toEqual([18, 0, 0, 18]);
      // Reservation: a soft hold at the facility only.
      const r1 = (await t.post('/v1/inventory/reservations', { itemId: item, facilityId: f.facility.id, qty: 6 }).expect(201)).body.data;
      expect(await byLocation()).toEqual({ B1: [16, 0, 16], B2: [2, 0, 2] });
      expect(await byFacility()).toEqual([18, 0, 6, 12]);
      // Allocation: reserved becomes allocated, pinned at B-1 (location code order, no lots).
      await t.post(`/v1/inventory/reservations/${r1.id}/allocate`).expect(200);
      expect(await byLocation()).toEqual({ B1: [16, 6, 10], B2: [2, 0, 2] });
      expect(await byFacility()).toEqual([18, 6, 0, 12]);
      // Fulfilment: the allocated stock leaves.
      await t.post(`/v1/inventory/reservations/${r1.id}/fulfill`).expect(200);
      expect(await byLocation()).toEqual({ B1: [10, 0, 10], B2: [2, 0, 2] });
      expect(await byFacility()).toEqual([12, 0, 0, 12]);
      // Release of an allocated and of an open reservation gives everything back.
      const r2 = (await t.post('/v1/inventory/reservations', { itemId: item, facilityId: f.facility.id, qty: 5 }).expect(201)).body.data;
      await t.post(`/v1/inventory/reservations/${r2.id}/allocate`, { allocations: [{ locationId: b2.id, qty: 2 }, { locationId: b1.id, qty: 3 }] }).expect(200);
      const r3 = (await t.post('/v1/inventory/reservations', { itemId: item, facilityId: f.facility.id, qty: 4 }).expect(201)).body.data;
      expect(await byLocation()).toEqual({ B1: [10, 3, 7], B2: [2, 2, 0] });
      expect(await byFacility()).toEqual([12, 5, 4, 3]);
      await t.post(`/v1/inventory/reservations/${r2.id}/release`).expect(200);
      expect(await byLocation()).toEqual({ B1: [10, 0, 10], B2: [2, 0, 2] });
      expect(await byFacility()).toEqual([12, 0, 4, 8]);
      await t.post(`/v1/inventory/reservations/${r3.id}/cancel`).expect(200);
      expect(await byFacility()).toEqual([12, 0, 0, 12]);
    });
  });

  describe('transactions', () => {
    let t: Tenant;
    let f: Fixture;
    let f2: Awaited<ReturnType<typeof facilityWithLocations>>;
    let other: { id: string; itemNo: string };
    /** Oldest first. */
    let posted: Txn[];
    let reservationId: string;

    beforeAll(async () => {
      t = await newTenant(ctx);
      f = await inventoryFixture(t);
      f2 = await facilityWithLocations(t, 1);
      other = await newItem(t, f.uom('EA'));
      const [b1, b2] = f.locations;
      posted = [];
      const post = async (body: Record<string, unknown>) => {
        posted.push((await adjust(t, body)).body.data);
        await sleep(5); // distinct postedAt for the from/to checks
      };
      await post({ itemId: f.item.id, locationId: b1.id, qtyDelta: 10 }); // TX-1
      await post({ itemId: f.item.id, locationId: b2.id, qtyDelta: 6 }); // TX-2
      await post({ itemId: other.id, locationId: b1.id, qtyDelta: 3 }); // TX-3
      await post({ itemId: f.item.id, locationId: f2.location.id, qtyDelta: 2 }); // TX-4
      await post({ itemId: f.item.id, locationId: b1.id, qtyDelta: -1 }); // TX-5
      // TX-6: a two-line fulfilment (3 from B-1, 2 from B-2).
      const r = (await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 5 }).expect(201)).body.data;
      reservationId = r.id;
      await t.post(`/v1/inventory/reservations/${r.id}/allocate`, { allocations: [{ locationId: b1.id, qty: 3 }, { locationId: b2.id, qty: 2 }] }).expect(200);
      await t.post(`/v1/inventory/reservations/${r.id}/fulfill`).expect(200);
      const all = await list(t, '/v1/inventory/transactions?limit=500');
      posted.push(all.data[0]);
    });

    const nos = (body: { data: Txn[] }) => body.data.map((x) => x.txnNo);

    it('lists newest first with a total count and stable paging', async () => {
      const all = await list(t, '/v1/inventory/transactions');
      expect(all.count).toBe(6);
      expect(nos(all)).toEqual(['TX-000006', 'TX-000005', 'TX-000004', 'TX-000003', 'TX-000002', 'TX-000001']);
      const pages: string[] = [];
      for (let offset = 0; offset < 6; offset += 4) {
        const p = await list(t, `/v1/inventory/transactions?limit=4&offset=${offset}`);
        expect(p).toMatchObject({ count: 6, limit: 4, offset });
        pages.push(...nos(p));
      }
      expect(pages).toEqual(nos(all));
      expect(nos(await list(t, '/v1/inventory/transactions?limit=2&offset=2'))).toEqual(['TX-000004', 'TX-000003']);
      expect(await list(t, '/v1/inventory/transactions?offset=6')).toMatchObject({ count: 6, data: [] });
      await t.get('/v1/inventory/transactions?limit=0').expect(400);
      await t.get('/v1/inventory/transactions?limit=501').expect(400);
      await t.get('/v1/inventory/transactions?offset=-1').expect(400);
    });

    it('includes every line of a transaction, even when a filter matched only one', async () => {
      const [b1, b2] = f.locations;
      const fulfilment = posted[5];
      expect(fulfilment).toMatchObject({ type: 'fulfillment', sourceId: reservationId });
      const expectedLines = [
        { lineNo: 1, itemId: f.item.id, locationId: b1.id, lotId: null, lotNo: null, statusId: f.status('AVAILABLE'), qtyDelta: -3, serialNos: [] },
        { lineNo: 2, itemId: f.item.id, locationId: b2.id, lotId: null, lotNo: null, statusId: f.status('AVAILABLE'), qtyDelta: -2, serialNos: [] },
      ];
      expect(fulfilment.lines).toEqual(expectedLines);
      const byB2 = await list(t, `/v1/inventory/transactions?locationId=${b2.id}`);
      expect(nos(byB2)).toEqual(['TX-000006', 'TX-000002']);
      expect(byB2.data[0].lines).toEqual(expectedLines);
      const byId = await list(t, `/v1/inventory/transactions?sourceId=${reservationId}`);
      expect(byId.data[0].lines).toEqual(expectedLines);
    });

    it('filters by item, facility, location, type and source', async () => {
      const [b1] = f.locations;
      expect(nos(await list(t, `/v1/inventory/transactions?itemId=${other.id}`))).toEqual(['TX-000003']);
      expect(nos(await list(t, `/v1/inventory/transactions?itemId=${f.item.id}`))).toEqual(['TX-000006', 'TX-000005', 'TX-000004', 'TX-000002', 'TX-000001']);
      expect(nos(await list(t, `/v1/inventory/transactions?facilityId=${f2.facility.id}`))).toEqual(['TX-000004']);
      expect((await list(t, `/v1/inventory/transactions?facilityId=${f.facility.id}`)).count).toBe(5);
      expect(nos(await list(t, `/v1/inventory/transactions?locationId=${b1.id}`))).toEqual(['TX-000006', 'TX-000005', 'TX-000003', 'TX-000001']);
      expect(nos(await list(t, `/v1/inventory/transactions?itemId=${f.item.id}&locationId=${b1.id}`))).toEqual(['TX-000006', 'TX-000005', 'TX-000001']);
      expect(nos(await list(t, '/v1/inventory/transactions?type=fulfillment'))).toEqual(['TX-000006']);
      expect((await list(t, '/v1/inventory/transactions?type=adjustment')).count).toBe(5);
      expect((await list(t, '/v1/inventory/transactions?type=receipt')).count).toBe(0);
      expect(nos(await list(t, `/v1/inventory/transactions?sourceId=${reservationId}`))).toEqual(['TX-000006']);
      expect((await list(t, `/v1/inventory/transactions?sourceId=${randomUUID()}`)).count).toBe(0);
      await t.get('/v1/inventory/transactions?type=theft').expect(400);
    });

    it('filters on postedAt: from inclusive, to exclusive', async () => {
      const third = posted[2];
      const at = encodeURIComponent(third.postedAt);
      expect(nos(await list(t, `/v1/inventory/transactions?from=${at}`))).toEqual(['TX-000006', 'TX-000005', 'TX-000004', 'TX-000003']);
      expect(nos(await list(t, `/v1/inventory/transactions?to=${at}`))).toEqual(['TX-000002', 'TX-000001']);
      const fifth = encodeURIComponent(posted[4].postedAt);
      expect(nos(await list(t, `/v1/inventory/transactions?from=${at}&to=${fifth}`))).toEqual(['TX-000004', 'TX-000003']);
      const later = encodeURIComponent(new Date(Date.parse(posted[5].postedAt) + 1).toISOString());
      expect((await list(t, `/v1/inventory/transactions?from=${later}`)).count).toBe(0);
      await t.get('/v1/inventory/transactions?from=yesterday').expect(400);
      // A calendar date is midnight UTC.
      expect((await list(t, '/v1/inventory/transactions?from=2000-01-01')).count).toBe(6);
      expect((await list(t, '/v1/inventory/transactions?to=2000-01-01')).count).toBe(0);
      // Strict calendar dates and date-times only: no impossible day (it used to roll over to March 2),
      // no week or ordinal date (it used to reach the database: a 400 without details).
      for (const field of ['from', 'to']) {
        for (const value of ['2026-02-30', '2026-02-30T10:00:00Z', '2026-W05', '2026-W05-1', '2026-032', '20260228', '2026-02-28T10:00:00']) {
          const res = await t.get(`/v1/inventory/transactions?${field}=${value}`).expect(400);
          expect(res.body).toMatchObject({ error: 'validation_failed', details: [{ field, message: expect.stringContaining('ISO 8601') }] });
        }
      }
    });

    it('reads one transaction by id; unknown, malformed and foreign ids are 404', async () => {
      const res = await t.get(`/v1/inventory/transactions/${posted[1].id}`).expect(200);
      expect(res.body).toEqual({ data: posted[1] });
      expect((await t.get(`/v1/inventory/transactions/${randomUUID()}`).expect(404)).body).toMatchObject({ error: 'not_found', status: 404 });
      expect((await t.get('/v1/inventory/transactions/not-a-uuid').expect(404)).body).toMatchObject({ error: 'not_found', status: 404 });
      const stranger = await newTenant(ctx);
      await stranger.get(`/v1/inventory/transactions/${posted[1].id}`).expect(404);
      expect(await list(stranger, '/v1/inventory/transactions')).toMatchObject({ count: 0, data: [] });
    });
  });

  describe('statuses', () => {
    it('lists the seeded statuses', async () => {
      const t = await newTenant(ctx);
      const body = await list(t, '/v1/inventory/statuses');
      expect(body).toEqual({
        count: 3, limit: 50, offset: 0, nextCursor: null,
        data: [
          { id: expect.any(String), code: 'AVAILABLE', name: 'Available', isAvailable: true },
          { id: expect.any(String), code: 'DAMAGED', name: 'Damaged', isAvailable: false },
          { id: expect.any(String), code: 'QUARANTINE', name: 'Quarantine', isAvailable: false },
        ],
      });
    });

    it('searches code and name with q: case-insensitive substring, wildcards literal', async () => {
      const t = await newTenant(ctx);
      await t.post('/v1/inventory/statuses', { code: 'HOLD', name: 'Held for QA', isAvailable: false }).expect(201);
      const codes = async (q: string) => {
        const body = await list(t, `/v1/inventory/statuses?q=${encodeURIComponent(q)}`);
        expect(body.count).toBe(body.data.length);
        return body.data.map((x: { code: string }) => x.code);
      };
      expect(await codes('arant')).toEqual(['QUARANTINE']); // code and name
      expect(await codes('damaged')).toEqual(['DAMAGED']);
      expect(await codes('qa')).toEqual(['HOLD']); // name only
      expect(await codes('A')).toEqual(['AVAILABLE', 'DAMAGED', 'HOLD', 'QUARANTINE']);
      expect(await codes('%')).toEqual([]);
      expect(await list(t, '/v1/inventory/statuses?q=a&limit=1&offset=1')).toMatchObject({ count: 4, data: [{ code: 'DAMAGED' }] });
    });

    it('creates statuses, refuses a duplicate code and validates', async () => {
      const t = await newTenant(ctx);
      const created = await t.post('/v1/inventory/statuses', { code: 'inspect', name: 'Inspection', isAvailable: false }).expect(201);
      expect(created.body).toEqual({ data: { id: expect.any(String), code: 'INSPECT', name: 'Inspection', isAvailable: false } });
      const dup = await t.post('/v1/inventory/statuses', { code: 'INSPECT', name: 'Again', isAvailable: true }).expect(409);
      expect(dup.body).toMatchObject({ error: 'duplicate', status: 409 });
      await t.post('/v1/inventory/statuses', { code: 'AVAILABLE', name: 'Seeded', isAvailable: true }).expect(409);
      for (const body of [
        { code: 'X', name: 'X' },
        { code: 'X', name: 'X', isAvailable: 'yes' },
        { code: 'has space', name: 'X', isAvailable: true },
        { code: 'X', name: '', isAvailable: true },
        { code: 'X', name: 'X', isAvailable: true, extra: 1 },
      ]) {
        expect((await t.post('/v1/inventory/statuses', body).expect(400)).body.error).toBe('validation_failed');
      }
      const all = await list(t, '/v1/inventory/statuses');
      expect(all.data.map((s: { code: string }) => s.code)).toEqual(['AVAILABLE', 'DAMAGED', 'INSPECT', 'QUARANTINE']);
      const reader = await newTenant(ctx, ['inventory:read']);
      await reader.post('/v1/inventory/statuses', { code: 'NOPE', name: 'No', isAvailable: true }).expect(403);
    });

    it('counts stock in a custom available status in availability, and not in a custom unavailable one', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const pick = (await t.post('/v1/inventory/statuses', { code: 'PICKFACE', name: 'Pick face', isAvailable: true }).expect(201)).body.data;
      const hold = (await t.post('/v1/inventory/statuses', { code: 'HOLD', name: 'On hold', isAvailable: false }).expect(201)).body.data;
      await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 2 });
      await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 3, statusId: pick.id });
      await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 4, statusId: hold.id });
      expect((await list(t, `/v1/inventory/availability?itemId=${f.item.id}`)).data).toEqual([
        { itemId: f.item.id, facilityId: f.facility.id, locationId: f.location.id, qtyOnHand: 5, qtyAllocated: 0, qtyAvailable: 5 },
      ]);
      expect((await list(t, `/v1/inventory/availability?itemId=${f.item.id}&groupBy=facility`)).data).toEqual([
        { itemId: f.item.id, facilityId: f.facility.id, qtyOnHand: 5, qtyAllocated: 0, qtyReserved: 0, qtyAvailable: 5 },
      ]);
      const codes = (await list(t, `/v1/inventory/balances?itemId=${f.item.id}`)).data.map((b: { statusCode: string; qtyOnHand: number }) => [b.statusCode, b.qtyOnHand]);
      expect(codes).toEqual([['AVAILABLE', 2], ['HOLD', 4], ['PICKFACE', 3]]);
      // The custom available stock can be reserved and allocated.
      const r = (await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 5 }).expect(201)).body.data;
      await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 1 }).expect(409);
      expect((await t.post(`/v1/inventory/reservations/${r.id}/allocate`).expect(200)).body.data).toMatchObject({ status: 'allocated', qtyAllocated: 5 });
    });
  });
});
