import { randomUUID } from 'node:crypto';
import { newTenant, startApp, Tenant, TestContext } from '../support/app';
import { adjust, inventoryFixture, newItem } from '../support/fixtures';
import { ISO_MS, UUID, subOf } from '../support/matchers';


/** The `sub` of a tenant's token (recorded as postedBy). */

type Fixture = Awaited<ReturnType<typeof inventoryFixture>>;

async function balances(t: Tenant, query: string) {
  return (await t.get(`/v1/inventory/balances?${query}`).expect(200)).body;
}

/** On hand of one (item, location, status[, lot]) balance; 0 when the row is absent. */
async function onHand(t: Tenant, itemId: string, locationId: string, extra = ''): Promise<number> {
  const body = await balances(t, `itemId=${itemId}&locationId=${locationId}${extra}`);
  expect(body.count).toBeLessThanOrEqual(1);
  return body.data[0]?.qtyOnHand ?? 0;
}

describe('inventory adjustments', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  describe('the ledger transaction', () => {
    it('returns the full transaction, numbered sequentially per tenant, and reads it back by id', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const before = Date.now();
      const first = (await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5, reason: 'opening stock' })).body;
      const after = Date.now();
      expect(first).toEqual({
        data: {
          id: expect.stringMatching(UUID),
          txnNo: 'TX-000001',
          type: 'adjustment',
          postedAt: expect.stringMatching(ISO_MS),
          postedBy: subOf(t.token),
          reason: 'opening stock',
          sourceType: 'adjustment',
          sourceId: null,
          lines: [{ lineNo: 1, itemId: f.item.id, locationId: f.location.id, lotId: null, lotNo: null, statusId: f.status('AVAILABLE'), qtyDelta: 5, serialNos: [] }],
        },
      });
      const postedAt = Date.parse(first.data.postedAt);
      expect(postedAt).toBeGreaterThanOrEqual(before - 1000);
      expect(postedAt).toBeLessThanOrEqual(after + 1000);

      const second = (await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: -2, reason: 'breakage' })).body.data;
      expect(second).toMatchObject({ txnNo: 'TX-000002', reason: 'breakage', lines: [{ lineNo: 1, qtyDelta: -2 }] });
      expect(second.id).not.toBe(first.data.id);

      expect((await t.get(`/v1/inventory/transactions/${first.data.id}`).expect(200)).body).toEqual(first);
      expect(await onHand(t, f.item.id, f.location.id)).toBe(3);

      // Numbers are per tenant: another tenant starts at TX-000001 too.
      const other = await newTenant(ctx);
      const g = await inventoryFixture(other);
      expect((await adjust(other, { itemId: g.item.id, locationId: g.location.id, qtyDelta: 1 })).body.data.txnNo).toBe('TX-000001');
      // …and this tenant's next one continues its own sequence.
      expect((await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 1 })).body.data.txnNo).toBe('TX-000003');
    });

    it('defaults the status to AVAILABLE and records an explicit one', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const q = (await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 2, statusId: f.status('DAMAGED') })).body.data;
      expect(q.lines[0].statusId).toBe(f.status('DAMAGED'));
      const body = await balances(t, `itemId=${f.item.id}`);
      expect(body.data).toEqual([expect.objectContaining({ statusId: f.status('DAMAGED'), statusCode: 'DAMAGED', qtyOnHand: 2 })]);
    });
  });

  describe('quantities', () => {
    it('adds decimals exactly (0.1 + 0.2 twice is 0.6) on a KG item', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const kg = await newItem(t, f.uom('EA'), { baseUomId: f.uom('KG') });
      const post = (qtyDelta: number) => adjust(t, { itemId: kg.id, locationId: f.location.id, qtyDelta });
      expect((await post(0.1)).body.data.lines[0].qtyDelta).toBe(0.1);
      await post(0.2);
      expect(await onHand(t, kg.id, f.location.id)).toBe(0.3);
      await post(0.1);
      await post(0.2);
      expect(await onHand(t, kg.id, f.location.id)).toBe(0.6);
      await post(-0.3);
      expect(await onHand(t, kg.id, f.location.id)).toBe(0.3);
      await post(0.001);
      expect(await onHand(t, kg.id, f.location.id)).toBe(0.301);
      const av = (await t.get(`/v1/inventory/availability?itemId=${kg.id}`).expect(200)).body.data;
      expect(av).toEqual([{ itemId: kg.id, facilityId: f.facility.id, locationId: f.location.id, qtyOnHand: 0.301, qtyAllocated: 0, qtyAvailable: 0.301 }]);
    });

    it('keeps all 6 decimals exactly on an item whose base UOM has 6 decimals', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const uom = (await t.post('/v1/uoms', { code: 'MICRO', name: 'Six decimals', decimals: 6 }).expect(201)).body.data;
      const item = await newItem(t, f.uom('EA'), { baseUomId: uom.id });
      const post = (qtyDelta: number, status = 201) => adjust(t, { itemId: item.id, locationId: f.location.id, qtyDelta }, status);
      await post(0.100001);
      await post(0.200002);
      expect(await onHand(t, item.id, f.location.id)).toBe(0.300003);
      await post(1e-7, 400);
      await post(-0.000003);
      expect(await onHand(t, item.id, f.location.id)).toBe(0.3);
    });

    it('refuses more decimals than the base UOM allows, naming qtyDelta', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const kg = await newItem(t, f.uom('EA'), { baseUomId: f.uom('KG') });
      const g = await newItem(t, f.uom('EA'), { baseUomId: f.uom('G') });
      // With balances in place, so the one-statement way (which needs them) judges the decimals too.
      for (const [itemId, qtyDelta] of [[f.item.id, 5], [kg.id, 5], [g.id, 5]] as const) await adjust(t, { itemId, locationId: f.location.id, qtyDelta });
      const cases: Array<[string, number]> = [
        [f.item.id, 1.5], // EA: whole units
        [kg.id, 0.0001], // KG: 3 decimals
        [g.id, 0.001], // G: 2 decimals
        [kg.id, 1e-7], // beyond the 6 decimals any quantity may have
      ];
      for (const [itemId, qtyDelta] of cases) {
        const res = await adjust(t, { itemId, locationId: f.location.id, qtyDelta }, 400);
        expect(res.body).toMatchObject({ error: 'validation_failed', status: 400 });
        expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'qtyDelta' })]));
      }
      // The most the UOM allows is fine.
      await adjust(t, { itemId: g.id, locationId: f.location.id, qtyDelta: 0.01 });
      await adjust(t, { itemId: kg.id, locationId: f.location.id, qtyDelta: 0.001 });
      expect(await onHand(t, g.id, f.location.id)).toBe(5.01);
      expect(await onHand(t, kg.id, f.location.id)).toBe(5.001);
      expect(await onHand(t, f.item.id, f.location.id)).toBe(5);
      expect((await t.get('/v1/inventory/transactions').expect(200)).body.count).toBe(5);
    });
  });

  describe('validation', () => {
    let t: Tenant;
    let f: Fixture;
    beforeAll(async () => {
      t = await newTenant(ctx);
      f = await inventoryFixture(t);
    });
    const base = () => ({ itemId: f.item.id, locationId: f.location.id, qtyDelta: 1, reason: 'r' });

    it.each<[string, Record<string, unknown>, string]>([
      ['qtyDelta 0', { qtyDelta: 0 }, 'qtyDelta'],
      ['qtyDelta missing', { qtyDelta: undefined }, 'qtyDelta'],
      ['qtyDelta as a string', { qtyDelta: '1' }, 'qtyDelta'],
      ['reason missing', { reason: undefined }, 'reason'],
      ['reason empty', { reason: '' }, 'reason'],
      ['reason of 501 characters', { reason: 'x'.repeat(501) }, 'reason'],
      ['an unknown field', { colour: 'red' }, 'colour'],
      ['a malformed itemId', { itemId: 'abc' }, 'itemId'],
      ['a malformed expiryDate', { expiryDate: '2030-02-30' }, 'expiryDate'],
    ])('rejects %s with 400 naming the field', async (_name, change, field) => {
      const body = { ...base(), ...change };
      const res = await t.post('/v1/inventory/adjustments', body).expect(400);
      expect(res.body).toMatchObject({ error: 'validation_failed', status: 400 });
      expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    });

    it('accepts a reason of exactly 500 characters; nothing refused above was posted', async () => {
      const res = await adjust(t, { ...base(), reason: 'y'.repeat(500) });
      expect(res.body.data.reason).toBe('y'.repeat(500));
      const txns = (await t.get('/v1/inventory/transactions').expect(200)).body;
      expect(txns.count).toBe(1);
      expect(txns.data[0].txnNo).toBe('TX-000001');
    });

    it('answers 404 naming the field for unknown item, location and status ids', async () => {
      for (const field of ['itemId', 'locationId', 'statusId']) {
        const res = await t.post('/v1/inventory/adjustments', { ...base(), [field]: randomUUID() }).expect(404);
        expect(res.body).toMatchObject({ error: 'not_found', status: 404, details: [{ field }] });
        expect(res.body.message).toContain(field);
      }
    });

    it("treats another tenant's item and location as unknown", async () => {
      const other = await newTenant(ctx);
      const g = await inventoryFixture(other);
      const item = await t.post('/v1/inventory/adjustments', { ...base(), itemId: g.item.id }).expect(404);
      expect(item.body.details).toEqual([expect.objectContaining({ field: 'itemId' })]);
      const loc = await t.post('/v1/inventory/adjustments', { ...base(), locationId: g.location.id }).expect(404);
      expect(loc.body.details).toEqual([expect.objectContaining({ field: 'locationId' })]);
      const status = await t.post('/v1/inventory/adjustments', { ...base(), statusId: g.status('AVAILABLE') }).expect(404);
      expect(status.body.details).toEqual([expect.objectContaining({ field: 'statusId' })]);
      expect((await balances(other, `itemId=${g.item.id}`)).count).toBe(0);
    });

    it('refuses non_stock and service items (400) and an inactive item (409 invalid_state)', async () => {
      for (const itemKind of ['non_stock', 'service']) {
        const item = await newItem(t, f.uom('EA'), { itemKind });
        const res = await adjust(t, { itemId: item.id, locationId: f.location.id, qtyDelta: 1 }, 400);
        expect(res.body).toMatchObject({ error: 'validation_failed', details: [expect.objectContaining({ field: 'itemId' })] });
      }
      const item = await newItem(t, f.uom('EA'));
      await adjust(t, { itemId: item.id, locationId: f.location.id, qtyDelta: 2 });
      await t.patch(`/v1/items/${item.id}`, { isActive: false }).expect(200);
      for (const qtyDelta of [1, -1]) {
        const res = await adjust(t, { itemId: item.id, locationId: f.location.id, qtyDelta }, 409);
        expect(res.body).toMatchObject({ error: 'invalid_state', status: 409 });
      }
      expect(await onHand(t, item.id, f.location.id)).toBe(2);
    });

    it('answers 403 to a token with inventory:read only', async () => {
      const reader = await newTenant(ctx, ['inventory:read']);
      const res = await reader.post('/v1/inventory/adjustments', { ...base() }).expect(403);
      expect(res.body).toMatchObject({ error: 'forbidden', status: 403 });
      await reader.get('/v1/inventory/balances').expect(200);
    });
  });

  describe('stock', () => {
    it('refuses going below on hand with 409 insufficient_stock naming item, location, requested and available', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const [loc1, loc2] = f.locations;
      await adjust(t, { itemId: f.item.id, locationId: loc1.id, qtyDelta: 3 });
      const res = await adjust(t, { itemId: f.item.id, locationId: loc1.id, qtyDelta: -5 }, 409);
      expect(res.body).toMatchObject({ error: 'insufficient_stock', status: 409 });
      expect(res.body.details).toEqual([
        expect.objectContaining({ field: 'qtyDelta', itemId: f.item.id, locationId: loc1.id, requested: 5, available: 3 }),
      ]);
      // Stock elsewhere in the facility does not help: balances are per location.
      await adjust(t, { itemId: f.item.id, locationId: loc2.id, qtyDelta: 10 });
      const none = await adjust(t, { itemId: f.item.id, locationId: loc1.id, qtyDelta: -4 }, 409);
      expect(none.body.details).toEqual([expect.objectContaining({ locationId: loc1.id, requested: 4, available: 3 })]);
      // Exactly what is on hand is fine, and the balance row then disappears.
      await adjust(t, { itemId: f.item.id, locationId: loc1.id, qtyDelta: -3 });
      expect((await balances(t, `itemId=${f.item.id}&locationId=${loc1.id}`)).count).toBe(0);
      const empty = await adjust(t, { itemId: f.item.id, locationId: loc1.id, qtyDelta: -1 }, 409);
      expect(empty.body.details).toEqual([expect.objectContaining({ locationId: loc1.id, requested: 1, available: 0 })]);
      // Refused postings left nothing behind: 3 postings, numbered without gaps.
      const txns = (await t.get('/v1/inventory/transactions').expect(200)).body;
      expect(txns.data.map((x: { txnNo: string }) => x.txnNo)).toEqual(['TX-000003', 'TX-000002', 'TX-000001']);
    });

    it('keeps QUARANTINE stock on hand in balances but out of availability', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 6 });
      await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 4, statusId: f.status('QUARANTINE') });
      const bal = await balances(t, `itemId=${f.item.id}`);
      expect(bal.data.map((b: { statusCode: string; qtyOnHand: number }) => [b.statusCode, b.qtyOnHand])).toEqual([
        ['AVAILABLE', 6],
        ['QUARANTINE', 4],
      ]);
      const av = (await t.get(`/v1/inventory/availability?itemId=${f.item.id}`).expect(200)).body.data;
      expect(av).toEqual([{ itemId: f.item.id, facilityId: f.facility.id, locationId: f.location.id, qtyOnHand: 6, qtyAllocated: 0, qtyAvailable: 6 }]);
      const fac = (await t.get(`/v1/inventory/availability?itemId=${f.item.id}&groupBy=facility`).expect(200)).body.data;
      expect(fac).toEqual([{ itemId: f.item.id, facilityId: f.facility.id, qtyOnHand: 6, qtyAllocated: 0, qtyReserved: 0, qtyAvailable: 6 }]);
      // Quarantined stock cannot be reserved.
      await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 7 }).expect(409);
      // Taking it out of quarantine is its own posting, limited to what is quarantined.
      const q = await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: -5, statusId: f.status('QUARANTINE') }, 409);
      expect(q.body.details).toEqual([expect.objectContaining({ requested: 5, available: 4, statusId: f.status('QUARANTINE') })]);
    });
  });

  describe('lot-tracked items', () => {
    it('requires a lot number, creates lots on inbound postings and refuses an unknown lot outbound', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const item = await newItem(t, f.uom('EA'), { lotTracking: 'required', expiryTracking: 'required' });
      const base = { itemId: item.id, locationId: f.location.id };

      const noLot = await adjust(t, { ...base, qtyDelta: 5 }, 400);
      expect(noLot.body).toMatchObject({ error: 'validation_failed', details: [expect.objectContaining({ field: 'lotNo' })] });
      const noExpiry = await adjust(t, { ...base, qtyDelta: 5, lotNo: 'L-1' }, 400);
      expect(noExpiry.body).toMatchObject({ error: 'validation_failed', details: [expect.objectContaining({ field: 'expiryDate' })] });
      expect((await t.get(`/v1/inventory/lots?itemId=${item.id}`).expect(200)).body.count).toBe(0);

      const txn = (await adjust(t, { ...base, qtyDelta: 5, lotNo: 'L-1', expiryDate: '2030-01-31' })).body.data;
      const lotId = txn.lines[0].lotId;
      expect(lotId).toMatch(UUID);
      const lots = (await t.get(`/v1/inventory/lots?itemId=${item.id}`).expect(200)).body;
      expect(lots).toMatchObject({ count: 1, data: [{ id: lotId, itemId: item.id, lotNo: 'L-1', expiryDate: '2030-01-31' }] });

      // The same lot number again is the same lot (its expiry need not be repeated).
      expect((await adjust(t, { ...base, qtyDelta: 2, lotNo: 'L-1' })).body.data.lines[0].lotId).toBe(lotId);
      const bal = await balances(t, `itemId=${item.id}`);
      expect(bal.data).toEqual([expect.objectContaining({ lotId, lotNo: 'L-1', expiryDate: '2030-01-31', qtyOnHand: 7 })]);

      // Outbound from a lot that does not exist: nothing to take, and no lot is created.
      const unknown = await adjust(t, { ...base, qtyDelta: -1, lotNo: 'L-404' }, 409);
      expect(unknown.body).toMatchObject({ error: 'insufficient_stock' });
      expect(unknown.body.details).toEqual([expect.objectContaining({ itemId: item.id, locationId: f.location.id, requested: 1, available: 0 })]);
      expect((await t.get(`/v1/inventory/lots?itemId=${item.id}`).expect(200)).body.count).toBe(1);
      // Outbound from a known lot, beyond it: 409 too.
      await adjust(t, { ...base, qtyDelta: -8, lotNo: 'L-1' }, 409);
      expect((await adjust(t, { ...base, qtyDelta: -7, lotNo: 'L-1' })).body.data.lines[0]).toMatchObject({ lotId, qtyDelta: -7 });
      expect((await balances(t, `itemId=${item.id}`)).count).toBe(0);
    });

    it('takes expiryDate as a calendar date YYYY-MM-DD that exists, naming the field otherwise', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const item = await newItem(t, f.uom('EA'), { lotTracking: 'required', expiryTracking: 'required' });
      const base = { itemId: item.id, locationId: f.location.id, qtyDelta: 1, lotNo: 'L-D' };
      // Week and ordinal dates used to reach the database (a 400 without details); the rest are not dates.
      for (const expiryDate of ['2026-W01-1', '2026-032', '2029-02-29', '2030-02-30', '2030-01-31T00:00:00Z', '20300131', 20300131, true]) {
        const res = await adjust(t, { ...base, expiryDate }, 400);
        expect(res.body).toMatchObject({ error: 'validation_failed', details: [{ field: 'expiryDate', message: 'must be a date YYYY-MM-DD' }] });
      }
      expect((await t.get(`/v1/inventory/lots?itemId=${item.id}`).expect(200)).body.count).toBe(0);
      await adjust(t, { ...base, expiryDate: '2028-02-29' });
      expect((await t.get(`/v1/inventory/lots?itemId=${item.id}`).expect(200)).body.data).toEqual([
        { id: expect.stringMatching(UUID), itemId: item.id, lotNo: 'L-D', expiryDate: '2028-02-29' },
      ]);
    });

    it('takes a new lot without expiry for an item that is not expiry-tracked', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const item = await newItem(t, f.uom('EA'), { lotTracking: 'required' });
      await adjust(t, { itemId: item.id, locationId: f.location.id, qtyDelta: 1, lotNo: 'NX' });
      expect((await t.get(`/v1/inventory/lots?itemId=${item.id}`).expect(200)).body.data).toEqual([
        { id: expect.stringMatching(UUID), itemId: item.id, lotNo: 'NX', expiryDate: null },
      ]);
    });

    it('refuses a lot number on an item that is not lot-tracked', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const res = await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 1, lotNo: 'L-1' }, 400);
      expect(res.body).toMatchObject({ error: 'validation_failed', details: [expect.objectContaining({ field: 'lotNo' })] });
      expect((await t.get(`/v1/inventory/lots?itemId=${f.item.id}`).expect(200)).body.count).toBe(0);
    });
  });

  describe('serial-tracked items', () => {
    it('moves serial numbers in and out of stock with their units', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const [loc1, loc2] = f.locations;
      const item = await newItem(t, f.uom('EA'), { serialTracking: 'required' });
      const at1 = { itemId: item.id, locationId: loc1.id };
      const serials = async () =>
        (await t.get(`/v1/inventory/serials?itemId=${item.id}`).expect(200)).body.data.map(
          (s: { serialNo: string; inStock: boolean; locationId: string; itemId: string }) => [s.serialNo, s.inStock, s.locationId, s.itemId],
        );

      for (const body of [
        { ...at1, qtyDelta: 2 },
        { ...at1, qtyDelta: 2, serialNos: ['S1'] },
        { ...at1, qtyDelta: 2, serialNos: ['S1', 'S2', 'S3'] },
        { ...at1, qtyDelta: 2, serialNos: ['S1', 'S1'] },
      ]) {
        const res = await adjust(t, body, 400);
        expect(res.body).toMatchObject({ error: 'validation_failed', details: [expect.objectContaining({ field: 'serialNos' })] });
      }
      expect(await serials()).toEqual([]);

      await adjust(t, { ...at1, qtyDelta: 2, serialNos: ['S1', 'S2'] });
      expect(await serials()).toEqual([
        ['S1', true, loc1.id, item.id],
        ['S2', true, loc1.id, item.id],
      ]);

      // A serial in stock anywhere cannot come in again.
      const dup = await adjust(t, { itemId: item.id, locationId: loc2.id, qtyDelta: 1, serialNos: ['S1'] }, 409);
      expect(dup.body).toMatchObject({ error: 'duplicate', status: 409 });
      await adjust(t, { itemId: item.id, locationId: loc2.id, qtyDelta: 1, serialNos: ['S3'] });

      // Outbound must name serials in stock at that location.
      for (const serialNos of [['S3'], ['S9'], []]) {
        const res = await adjust(t, { ...at1, qtyDelta: -1, serialNos }, 400);
        expect(res.body).toMatchObject({ error: 'validation_failed', details: [expect.objectContaining({ field: 'serialNos' })] });
      }
      const out = (await adjust(t, { ...at1, qtyDelta: -1, serialNos: ['S1'] })).body.data;
      // The ledger line records which serial left.
      expect(await ctx.db.query(`SELECT serial_nos FROM ledger_lines WHERE transaction_id = $1`, [out.id])).toEqual([{ serial_nos: ['S1'] }]);
      expect(await serials()).toEqual([
        ['S1', false, loc1.id, item.id],
        ['S2', true, loc1.id, item.id],
        ['S3', true, loc2.id, item.id],
      ]);
      expect(await onHand(t, item.id, loc1.id)).toBe(1);
      // Once out, S1 can no longer go out, but can come back in (here at another location).
      await adjust(t, { ...at1, qtyDelta: -1, serialNos: ['S1'] }, 400);
      await adjust(t, { itemId: item.id, locationId: loc2.id, qtyDelta: 1, serialNos: ['S1'] });
      expect((await serials())[0]).toEqual(['S1', true, loc2.id, item.id]);
      expect(await onHand(t, item.id, loc2.id)).toBe(2);
    });

    it('refuses serial numbers on an item that is not serial-tracked', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const res = await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 1, serialNos: ['X'] }, 400);
      expect(res.body.details).toEqual([expect.objectContaining({ field: 'serialNos' })]);
    });
  });

  describe('append-only ledger', () => {
    /** Runs `sql` in a transaction that is always rolled back (as `role` when given); returns the error. */
    async function attempt(sql: string, role?: string, tenantId?: string): Promise<Error | undefined> {
      const qr = ctx.db.createQueryRunner();
      await qr.connect();
      await qr.startTransaction();
      try {
        if (role) await qr.query(`SELECT set_config('role', $1, true), set_config('app.tenant_id', $2, true)`, [role, tenantId]);
        await qr.query(sql);
        return undefined;
      } catch (err) {
        return err as Error;
      } finally {
        await qr.rollbackTransaction();
        await qr.release();
      }
    }

    it('refuses UPDATE and DELETE of posted rows, for the superuser by trigger and for the app role by privilege', async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const txn = (await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 4 })).body.data;

      const asOwnerUpdate = await attempt('UPDATE ledger_lines SET qty_delta = 1');
      expect(asOwnerUpdate?.message).toMatch(/append-only/);
      const asOwnerDelete = await attempt('DELETE FROM ledger_transactions');
      expect(asOwnerDelete?.message).toMatch(/append-only/);

      // The app role can read its tenant's ledger (so the role switch works) but holds no UPDATE/DELETE privilege.
      expect(await attempt(`SELECT 1 FROM ledger_lines`, 'inventory_app', t.tenantId)).toBeUndefined();
      const asAppUpdate = await attempt('UPDATE ledger_lines SET qty_delta = 1', 'inventory_app', t.tenantId);
      expect(asAppUpdate?.message).toMatch(/permission denied for table ledger_lines/);
      const asAppDelete = await attempt('DELETE FROM ledger_transactions', 'inventory_app', t.tenantId);
      expect(asAppDelete?.message).toMatch(/permission denied for table ledger_transactions/);
      const [priv] = await ctx.db.query(
        `SELECT has_table_privilege('inventory_app', 'ledger_lines', 'UPDATE') AS lu, has_table_privilege('inventory_app', 'ledger_lines', 'DELETE') AS ld,
                has_table_privilege('inventory_app', 'ledger_transactions', 'UPDATE') AS tu, has_table_privilege('inventory_app', 'ledger_transactions', 'DELETE') AS td`,
      );
      expect(priv).toEqual({ lu: false, ld: false, tu: false, td: false });

      expect((await t.get(`/v1/inventory/transactions/${txn.id}`).expect(200)).body.data.lines[0].qtyDelta).toBe(4);
    });
  });
});
