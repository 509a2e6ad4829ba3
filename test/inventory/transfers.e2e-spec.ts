import { randomUUID } from 'node:crypto';
import { newTenant, startApp, Tenant, TestContext } from '../support/app';
import { adjust, facilityWithLocations, FacilityFixture, InventoryFixture, inventoryFixture, lotId, newItem, onHand, transactionsOf } from '../support/fixtures';
import { auditFields, ISO_MS } from '../support/matchers';

type Fixture = InventoryFixture;
type Destination = FacilityFixture;

describe('Transfer orders', () => {
  let ctx: TestContext;
  let t: Tenant;
  let f: Fixture;
  let dest: Destination;

  beforeAll(async () => {
    ctx = await startApp();
    t = await newTenant(ctx);
    f = await inventoryFixture(t, { locations: 2 });
    dest = await facilityWithLocations(t, 2);
  });
  afterAll(() => ctx.close());

  const create = (body: Record<string, unknown>, status = 201) =>
    t.post('/v1/inventory/transfers', { fromFacilityId: f.facility.id, toFacilityId: dest.facility.id, ...body }).expect(status);
  const line = (itemId: string, qty: number, extra: Record<string, unknown> = {}) => ({
    itemId, qty, fromLocationId: f.locations[0].id, toLocationId: dest.locations[0].id, ...extra,
  });
  const action = (id: string, name: string, status = 200) => t.post(`/v1/inventory/transfers/${id}/${name}`).expect(status);

  it('creates a draft, ships it (stock leaves the source) and receives it (stock arrives at the destination)', async () => {
    const item = await newItem(t, f.uom('EA'));
    await adjust(t, { itemId: item.id, locationId: f.locations[0].id, qtyDelta: 10 });

    const res = await create({
      notes: 'restock store',
      lines: [line(item.id, 4), line(item.id, 3, { toLocationId: dest.locations[1].id })],
    });
    const draft = res.body.data;
    expect(draft).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      transferNo: 'TO-000001',
      fromFacilityId: f.facility.id,
      toFacilityId: dest.facility.id,
      status: 'draft',
      notes: 'restock store',
      lines: [
        { id: expect.any(String), lineNo: 1, itemId: item.id, qty: 4, fromLocationId: f.locations[0].id, toLocationId: dest.locations[0].id, lotId: null, qtyShipped: 0, qtyReceived: 0 },
        { id: expect.any(String), lineNo: 2, itemId: item.id, qty: 3, fromLocationId: f.locations[0].id, toLocationId: dest.locations[1].id, lotId: null, qtyShipped: 0, qtyReceived: 0 },
      ],
      shippedAt: null,
      receivedAt: null,
      ...auditFields(t.token),
    });
    expect(res.headers.etag).toBe('"1"');
    expect((await t.get(`/v1/inventory/transfers/${draft.id}`).expect(200)).body.data).toEqual(draft);
    // A draft moves nothing.
    expect(await onHand(t, { itemId: item.id, locationId: f.locations[0].id })).toBe(10);

    const shipped = (await action(draft.id, 'ship')).body.data;
    expect(shipped).toMatchObject({ status: 'shipped', version: 2, shippedAt: expect.stringMatching(ISO_MS), receivedAt: null });
    expect(shipped.lines.map((l: { qtyShipped: number; qtyReceived: number }) => [l.qtyShipped, l.qtyReceived])).toEqual([[4, 0], [3, 0]]);
    // 10 − 4 − 3 = 3 left at the source; nothing at the destination yet (in transit).
    expect(await onHand(t, { itemId: item.id, locationId: f.locations[0].id })).toBe(3);
    expect(await onHand(t, { itemId: item.id, locationId: dest.locations[0].id })).toBe(0);
    const atp = (await t.get(`/v1/inventory/availability?itemId=${item.id}&groupBy=facility`).expect(200)).body.data;
    expect(atp).toEqual([{ itemId: item.id, facilityId: f.facility.id, qtyOnHand: 3, qtyAllocated: 0, qtyReserved: 0, qtyAvailable: 3 }]);

    const received = (await action(draft.id, 'receive')).body.data;
    expect(received).toMatchObject({ status: 'received', version: 3, receivedAt: expect.stringMatching(ISO_MS) });
    expect(received.lines.map((l: { qtyShipped: number; qtyReceived: number }) => [l.qtyShipped, l.qtyReceived])).toEqual([[4, 4], [3, 3]]);
    expect(await onHand(t, { itemId: item.id, locationId: f.locations[0].id })).toBe(3);
    expect(await onHand(t, { itemId: item.id, locationId: dest.locations[0].id })).toBe(4);
    expect(await onHand(t, { itemId: item.id, locationId: dest.locations[1].id })).toBe(3);

    const txns = await transactionsOf(t, draft.id);
    expect(txns.count).toBe(2);
    expect(txns.data.map((x) => [x.type, x.sourceType, x.sourceId])).toEqual([
      ['transfer_in', 'transfer_order', draft.id],
      ['transfer_out', 'transfer_order', draft.id],
    ]);
    expect(txns.data[1].lines.map((l) => [l.lineNo, l.locationId, l.qtyDelta])).toEqual([
      [1, f.locations[0].id, -4],
      [2, f.locations[0].id, -3],
    ]);
    expect(txns.data[0].lines.map((l) => [l.lineNo, l.locationId, l.qtyDelta])).toEqual([
      [1, dest.locations[0].id, 4],
      [2, dest.locations[1].id, 3],
    ]);

    // received is final
    expect((await action(draft.id, 'ship', 409)).body).toMatchObject({ error: 'invalid_state', message: expect.stringContaining('received') });
    expect((await action(draft.id, 'receive', 409)).body.error).toBe('invalid_state');
    expect((await action(draft.id, 'cancel', 409)).body.error).toBe('invalid_state');
  });

  it('moves a lot of a lot-tracked item and keeps the lot', async () => {
    const item = await newItem(t, f.uom('EA'), { lotTracking: 'required' });
    await adjust(t, { itemId: item.id, locationId: f.locations[1].id, qtyDelta: 5, lotNo: 'L-1' });
    const lot = await lotId(t, item.id, 'L-1');

    const missing = (await create({ lines: [line(item.id, 2, { fromLocationId: f.locations[1].id })] }, 400)).body;
    expect(missing).toMatchObject({ error: 'validation_failed', details: [{ field: 'lines[0].lotId' }] });
    const other = await newItem(t, f.uom('EA'), { lotTracking: 'required' });
    // A lot that exists but belongs to another item does not fit: 400; an id naming no lot: 404.
    const wrongLot = (await create({ lines: [line(other.id, 1, { fromLocationId: f.locations[1].id, lotId: lot })] }, 400)).body;
    expect(wrongLot).toMatchObject({ error: 'validation_failed', details: [{ field: 'lines[0].lotId', message: expect.stringContaining('another item') }] });
    const unknownLot = (await create({ lines: [line(item.id, 1, { fromLocationId: f.locations[1].id, lotId: randomUUID() })] }, 404)).body;
    expect(unknownLot).toMatchObject({ error: 'not_found', details: [{ field: 'lines[0].lotId', message: 'not found' }] });
    const lotDraft = (await create({ lines: [line(item.id, 1, { fromLocationId: f.locations[1].id, lotId: lot })] })).body.data;
    const patchWrongLot = await t
      .patch(`/v1/inventory/transfers/${lotDraft.id}`, { lines: [line(other.id, 1, { fromLocationId: f.locations[1].id, lotId: lot })] })
      .expect(400);
    expect(patchWrongLot.body.details).toEqual([{ field: 'lines[0].lotId', message: expect.stringContaining('another item') }]);

    const draft = (await create({ lines: [line(item.id, 2, { fromLocationId: f.locations[1].id, lotId: lot })] })).body.data;
    expect(draft.lines[0]).toMatchObject({ lotId: lot, qty: 2 });
    await action(draft.id, 'ship');
    expect(await onHand(t, { itemId: item.id, locationId: f.locations[1].id, lotId: lot })).toBe(3);
    await action(draft.id, 'receive');
    expect(await onHand(t, { itemId: item.id, locationId: dest.locations[0].id, lotId: lot })).toBe(2);
    const txns = await transactionsOf(t, draft.id);
    expect(txns.data.flatMap((x) => x.lines.map((l) => [x.type, l.lotId, l.qtyDelta]))).toEqual([
      ['transfer_in', lot, 2],
      ['transfer_out', lot, -2],
    ]);
  });

  it('converts line quantities from the line UOM to base units (2 BOX of 12 EA → 24 EA)', async () => {
    const item = await newItem(t, f.uom('EA'), { uomConversions: [{ uomId: f.uom('BOX'), factor: 12 }] });
    await adjust(t, { itemId: item.id, locationId: f.locations[0].id, qtyDelta: 30 });

    const draft = (await create({ lines: [line(item.id, 2, { uomId: f.uom('BOX') }), line(item.id, 5, { uomId: f.uom('EA') })] })).body.data;
    expect(draft.lines.map((l: { qty: number }) => l.qty)).toEqual([24, 5]);
    await action(draft.id, 'ship');
    // 30 − 24 − 5 = 1
    expect(await onHand(t, { itemId: item.id, locationId: f.locations[0].id })).toBe(1);
    await action(draft.id, 'receive');
    expect(await onHand(t, { itemId: item.id, locationId: dest.locations[0].id })).toBe(29);

    // BOX takes whole numbers
    expect((await create({ lines: [line(item.id, 1.5, { uomId: f.uom('BOX') })] }, 400)).body.details).toEqual([
      { field: 'lines[0].qty', message: 'must have at most 0 decimals (unit BOX)' },
    ]);
    // KG is no unit of this item
    expect((await create({ lines: [line(item.id, 1, { uomId: f.uom('KG') })] }, 400)).body.details).toEqual([
      { field: 'lines[0].uomId', message: expect.stringContaining('is not a unit of') },
    ]);
    // an unknown UOM
    expect((await create({ lines: [line(item.id, 1, { uomId: randomUUID() })] }, 404)).body).toMatchObject({
      error: 'not_found',
      details: [{ field: 'lines[0].uomId' }],
    });
    // the base unit EA takes whole numbers too
    expect((await create({ lines: [line(item.id, 2.5)] }, 400)).body.details).toEqual([
      { field: 'lines[0].qty', message: expect.stringContaining('at most 0 decimals') },
    ]);
  });

  it('rounds a converted quantity up to the base UOM decimals', async () => {
    // base KG (3 decimals); 1 G = 0.001 KG; 1.25 G = 0.00125 KG → 0.002 KG
    const item = await newItem(t, f.uom('KG'), { uomConversions: [{ uomId: f.uom('G'), factor: 0.001 }] });
    const draft = (await create({ lines: [line(item.id, 1.25, { uomId: f.uom('G') }), line(item.id, 0.125)] })).body.data;
    expect(draft.lines.map((l: { qty: number }) => l.qty)).toEqual([0.002, 0.125]);
  });

  it('changes a draft (notes, lines replaced) with If-Match, and refuses changes and actions in the wrong state', async () => {
    const item = await newItem(t, f.uom('EA'));
    await adjust(t, { itemId: item.id, locationId: f.locations[0].id, qtyDelta: 6 });
    const draft = (await create({ lines: [line(item.id, 1), line(item.id, 2)] })).body.data;

    // receive a draft
    expect((await action(draft.id, 'receive', 409)).body).toMatchObject({ error: 'invalid_state', message: expect.stringContaining('draft') });

    const patched = await t
      .patch(`/v1/inventory/transfers/${draft.id}`)
      .set('If-Match', '"1"')
      .send({ notes: 'changed', lines: [line(item.id, 5, { toLocationId: dest.locations[1].id })] })
      .expect(200);
    expect(patched.headers.etag).toBe('"2"');
    expect(patched.body.data).toMatchObject({ notes: 'changed', version: 2, status: 'draft' });
    expect(patched.body.data.lines).toEqual([
      { id: expect.any(String), lineNo: 1, itemId: item.id, qty: 5, fromLocationId: f.locations[0].id, toLocationId: dest.locations[1].id, lotId: null, qtyShipped: 0, qtyReceived: 0 },
    ]);
    // stale If-Match
    const stale = await t.patch(`/v1/inventory/transfers/${draft.id}`).set('If-Match', '"1"').send({ notes: 'again' }).expect(412);
    expect(stale.body.error).toBe('version_conflict');
    await t.post(`/v1/inventory/transfers/${draft.id}/ship`).set('If-Match', '"1"').expect(412);
    // notes only keeps the lines
    const notesOnly = (await t.patch(`/v1/inventory/transfers/${draft.id}`, { notes: null }).expect(200)).body.data;
    expect(notesOnly).toMatchObject({ notes: null, version: 3, lines: [{ qty: 5 }] });
    // lines are optional on a PATCH, null is lines left out (CONTRACT §1), and they hold objects only
    const nullLines = await t.patch(`/v1/inventory/transfers/${draft.id}`, { lines: null }).expect(200);
    expect(nullLines.body.data.lines).toEqual([expect.objectContaining({ qty: 5 })]);
    const nestedLines = await t.patch(`/v1/inventory/transfers/${draft.id}`, { lines: [[line(item.id, 1)]] }).expect(400);
    expect(nestedLines.body.details).toEqual([{ field: 'lines', message: 'must contain only objects' }]);
    // lines are validated against the transfer's facilities
    const wrong = await t.patch(`/v1/inventory/transfers/${draft.id}`, { lines: [line(item.id, 1, { toLocationId: f.locations[1].id })] }).expect(400);
    expect(wrong.body.details).toEqual([{ field: 'lines[0].toLocationId', message: 'is a location of another facility' }]);

    const shipped = (await t.post(`/v1/inventory/transfers/${draft.id}/ship`).set('If-Match', '"3"').expect(200)).body.data;
    expect(shipped).toMatchObject({ status: 'shipped', version: 4 });
    expect(await onHand(t, { itemId: item.id, locationId: f.locations[0].id })).toBe(1);

    // ship twice, patch / cancel a shipped one
    expect((await action(draft.id, 'ship', 409)).body).toMatchObject({ error: 'invalid_state', message: expect.stringContaining('shipped') });
    expect((await t.patch(`/v1/inventory/transfers/${draft.id}`, { notes: 'x' }).expect(409)).body).toMatchObject({
      error: 'invalid_state',
      message: expect.stringContaining('shipped'),
    });
    expect((await action(draft.id, 'cancel', 409)).body).toMatchObject({ error: 'invalid_state', message: expect.stringContaining('shipped') });
    // nothing moved twice
    expect(await onHand(t, { itemId: item.id, locationId: f.locations[0].id })).toBe(1);
    expect((await transactionsOf(t, draft.id)).count).toBe(1);

    // cancel a draft: final
    const other = (await create({ lines: [line(item.id, 1)] })).body.data;
    const cancelled = (await action(other.id, 'cancel')).body.data;
    expect(cancelled).toMatchObject({ status: 'cancelled', version: 2, shippedAt: null });
    expect((await action(other.id, 'ship', 409)).body.message).toContain('cancelled');
    expect((await transactionsOf(t, other.id)).count).toBe(0);
  });

  it('refuses to ship without enough stock and changes nothing', async () => {
    const a = await newItem(t, f.uom('EA'));
    const b = await newItem(t, f.uom('EA'));
    await adjust(t, { itemId: a.id, locationId: f.locations[0].id, qtyDelta: 5 });
    await adjust(t, { itemId: b.id, locationId: f.locations[0].id, qtyDelta: 5 });
    // line 1 could ship; line 2 asks 8 of 5
    const draft = (await create({ lines: [line(a.id, 2), line(b.id, 8)] })).body.data;
    const res = (await action(draft.id, 'ship', 409)).body;
    expect(res).toMatchObject({
      error: 'insufficient_stock',
      details: [{ field: 'lines[1].qty', itemId: b.id, locationId: f.locations[0].id, requested: 8, available: 5 }],
    });
    const after = (await t.get(`/v1/inventory/transfers/${draft.id}`).expect(200)).body.data;
    expect(after).toMatchObject({ status: 'draft', version: 1, shippedAt: null });
    expect(after.lines.map((l: { qtyShipped: number }) => l.qtyShipped)).toEqual([0, 0]);
    expect(await onHand(t, { itemId: a.id, locationId: f.locations[0].id })).toBe(5);
    expect(await onHand(t, { itemId: b.id, locationId: f.locations[0].id })).toBe(5);
    expect((await transactionsOf(t, draft.id)).count).toBe(0);
  });

  it('validates the request', async () => {
    const item = await newItem(t, f.uom('EA'));
    const nonStock = await newItem(t, f.uom('EA'), { itemKind: 'non_stock' });
    const inactive = await newItem(t, f.uom('EA'), { isActive: false });

    const same = (await create({ toFacilityId: f.facility.id, lines: [line(item.id, 1, { toLocationId: f.locations[1].id })] }, 400)).body;
    expect(same).toMatchObject({ error: 'validation_failed', details: [{ field: 'toFacilityId', message: 'must differ from fromFacilityId' }] });
    expect((await create({ fromFacilityId: randomUUID(), lines: [line(item.id, 1)] }, 404)).body).toMatchObject({
      error: 'not_found',
      details: [{ field: 'fromFacilityId' }],
    });
    expect((await create({ toFacilityId: randomUUID(), lines: [line(item.id, 1)] }, 404)).body.details).toEqual([{ field: 'toFacilityId', message: 'not found' }]);
    // a from location of the destination facility
    expect((await create({ lines: [line(item.id, 1, { fromLocationId: dest.locations[0].id })] }, 400)).body.details).toEqual([
      { field: 'lines[0].fromLocationId', message: 'is a location of another facility' },
    ]);
    expect((await create({ lines: [line(item.id, 1), line(item.id, 1, { toLocationId: randomUUID() })] }, 404)).body.details).toEqual([
      { field: 'lines[1].toLocationId', message: 'not found' },
    ]);
    expect((await create({ lines: [line(nonStock.id, 1)] }, 400)).body.details).toEqual([
      { field: 'lines[0].itemId', message: expect.stringContaining('non_stock') },
    ]);
    expect((await create({ lines: [line(inactive.id, 1)] }, 409)).body.error).toBe('invalid_state');
    expect((await create({ lines: [line(randomUUID(), 1)] }, 404)).body.details).toEqual([{ field: 'lines[0].itemId', message: 'not found' }]);
    expect((await create({ lines: [line(item.id, 0)] }, 400)).body.details).toEqual([{ field: 'lines[0].qty', message: expect.any(String) }]);
    expect((await create({ lines: [] }, 400)).body.details[0].field).toBe('lines');
    // A nested array is not a line (it used to be read as one with no ids: a wrong 404).
    expect((await create({ lines: [[line(item.id, 1)]] }, 400)).body).toMatchObject({
      error: 'validation_failed',
      details: [{ field: 'lines', message: 'must contain only objects' }],
    });
    expect((await create({ lines: [{ ...line(item.id, 1), bogus: 1 }] }, 400)).body.details).toEqual([
      { field: 'lines[0].bogus', message: 'is not an allowed field' },
    ]);
    expect((await create({ lines: [line(item.id, 1, { serialNos: ['S1'] })] }, 400)).body.details).toEqual([
      { field: 'lines[0].serialNos', message: expect.stringContaining('not serial-tracked') },
    ]);
  });

  it('moves serial numbers with the stock, picking them at ship when none are given', async () => {
    const item = await newItem(t, f.uom('EA'), { serialTracking: 'required' });
    await adjust(t, { itemId: item.id, locationId: f.locations[0].id, qtyDelta: 3, serialNos: ['SN-3', 'SN-1', 'SN-2'] });
    expect((await create({ lines: [line(item.id, 2, { serialNos: ['SN-1'] })] }, 400)).body.details[0].field).toBe('lines[0].serialNos');

    const named = (await create({ lines: [line(item.id, 1, { serialNos: ['SN-3'] })] })).body.data;
    const picked = (await create({ lines: [line(item.id, 1)] })).body.data;
    await action(named.id, 'ship');
    await action(picked.id, 'ship');
    await action(named.id, 'receive');
    await action(picked.id, 'receive');
    const serials = (await t.get(`/v1/inventory/serials?itemId=${item.id}`).expect(200)).body.data;
    // picked in serial-number order: SN-1 of the two left (SN-1, SN-2)
    expect(serials.map((s: { serialNo: string; locationId: string; inStock: boolean }) => [s.serialNo, s.locationId, s.inStock])).toEqual([
      ['SN-1', dest.locations[0].id, true],
      ['SN-2', f.locations[0].id, true],
      ['SN-3', dest.locations[0].id, true],
    ]);
  });

  it('lists newest first with filters, q and paging; 404 for unknown, malformed and other tenants\' ids', async () => {
    const u = await newTenant(ctx);
    const g = await inventoryFixture(u);
    const h = await facilityWithLocations(u, 1);
    const mk = async (from: Fixture['facility'], to: Destination['facility'], fromLoc: string, toLoc: string) =>
      (await u.post('/v1/inventory/transfers', { fromFacilityId: from.id, toFacilityId: to.id, lines: [{ itemId: g.item.id, qty: 1, fromLocationId: fromLoc, toLocationId: toLoc }] }).expect(201)).body.data;
    const t1 = await mk(g.facility, h.facility, g.location.id, h.location.id);
    const t2 = await mk(h.facility, g.facility, h.location.id, g.location.id);
    const t3 = await mk(g.facility, h.facility, g.location.id, h.location.id);
    await u.post(`/v1/inventory/transfers/${t3.id}/cancel`).expect(200);

    const all = (await u.get('/v1/inventory/transfers').expect(200)).body;
    expect(all).toMatchObject({ count: 3, limit: 50, offset: 0 });
    expect(all.data.map((x: { transferNo: string }) => x.transferNo)).toEqual(['TO-000003', 'TO-000002', 'TO-000001']);
    expect(all.data[0].lines).toHaveLength(1);
    const ids = async (query: string) => (await u.get(`/v1/inventory/transfers?${query}`).expect(200)).body.data.map((x: { id: string }) => x.id);
    expect(await ids(`fromFacilityId=${g.facility.id}`)).toEqual([t3.id, t1.id]);
    expect(await ids(`toFacilityId=${g.facility.id}`)).toEqual([t2.id]);
    expect(await ids('status=cancelled')).toEqual([t3.id]);
    expect(await ids('status=draft&q=000001')).toEqual([t1.id]);
    expect(await ids('limit=1&offset=1')).toEqual([t2.id]);
    await u.get('/v1/inventory/transfers?status=open').expect(400);

    await u.get(`/v1/inventory/transfers/${randomUUID()}`).expect(404);
    await u.get('/v1/inventory/transfers/not-a-uuid').expect(404);
    await u.post('/v1/inventory/transfers/not-a-uuid/ship').expect(404);
    await t.get(`/v1/inventory/transfers/${t1.id}`).expect(404);
    await t.post(`/v1/inventory/transfers/${t1.id}/cancel`).expect(404);
    expect((await t.get('/v1/inventory/transfers').expect(200)).body.data.some((x: { id: string }) => x.id === t1.id)).toBe(false);
  });

  it('needs inventory:read to read and inventory:write to change', async () => {
    const reader = await newTenant(ctx, ['inventory:read']);
    await reader.get('/v1/inventory/transfers').expect(200);
    await reader.post('/v1/inventory/transfers', {}).expect(403);
    const writer = await newTenant(ctx, ['inventory:write']);
    await writer.get('/v1/inventory/transfers').expect(403);
  });
});
