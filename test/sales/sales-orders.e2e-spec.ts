import type * as Verify from '../../src/inventory/ledger/verify.sql';
import { fromDist } from '../support/dist';
import { newTenant, startApp, Tenant, TestContext } from '../support/app';
import {
  adjust, facilityWithLocations, FacilityFixture, InventoryFixture, inventoryFixture, lotId, newCustomer, newItem, onHand, salesOrderIn, transactionsOf,
} from '../support/fixtures';
import { auditFields, UUID } from '../support/matchers';

const { verifyLedger } = fromDist<typeof Verify>('inventory/ledger/verify.sql');

describe('Sales orders', () => {
  let ctx: TestContext;
  let t: Tenant;
  let f: InventoryFixture;
  let other: FacilityFixture;
  const sql = (text: string, params?: unknown[]) => ctx.db.query(text, params);

  beforeAll(async () => {
    ctx = await startApp();
    t = await newTenant(ctx);
    f = await inventoryFixture(t, { locations: 2 });
    other = await facilityWithLocations(t, 1);
  });
  afterAll(() => ctx.close());

  const SO = '/v1/sales/orders';
  const create = async (body: Record<string, unknown>, status = 201) =>
    t.post(SO, { customerId: body.customerId ?? (await newCustomer(t)).id, facilityId: f.facility.id, ...body }).expect(status);
  const action = (id: string, name: string, status = 200, opts: { body?: object; ifMatch?: string } = {}) => {
    const req = t.post(`${SO}/${id}/${name}`, opts.body);
    return (opts.ifMatch ? req.set('If-Match', opts.ifMatch) : req).expect(status);
  };
  const ship = (id: string, lines?: Array<Record<string, unknown>>, status = 200) => action(id, 'ship', status, { body: lines ? { lines } : undefined });
  const order = async (id: string) => (await t.get(`${SO}/${id}`).expect(200)).body.data;
  /** Available-to-promise of the item at the main facility (groupBy=facility), or null when it has no row. */
  const atp = async (itemId: string, tenant = t, facilityId = f.facility.id) =>
    (await tenant.get(`/v1/inventory/availability?groupBy=facility&itemId=${itemId}&facilityId=${facilityId}`).expect(200)).body.data[0] ?? null;
  const position = (itemId: string, onHandQty: number, allocated: number, reserved: number) => ({
    itemId, facilityId: f.facility.id, qtyOnHand: onHandQty, qtyAllocated: allocated, qtyReserved: reserved, qtyAvailable: onHandQty - allocated - reserved,
  });
  /** The order's reservations: active ones (open, allocated) unless `status` is given. */
  const holds = async (orderId: string, status?: string) =>
    (await t.get(`/v1/inventory/reservations?demandId=${orderId}&limit=500${status ? `&status=${status}` : ''}`).expect(200)).body.data;
  const reservation = async (id: string) => (await t.get(`/v1/inventory/reservations/${id}`).expect(200)).body.data;
  const stocked = async (qty: number, spec: Record<string, unknown> = {}, locationId = f.location.id) => {
    const item = await newItem(t, f.uom('EA'), spec);
    if (qty) await adjust(t, { itemId: item.id, locationId, qtyDelta: qty });
    return item;
  };

  it('creates a draft: numbered lines of any item kind in any UOM of the item, exact total, SO number', async () => {
    const customer = await newCustomer(t);
    const boxed = await newItem(t, f.uom('EA'), { uomConversions: [{ uomId: f.uom('BOX'), factor: 12 }] });
    const service = await newItem(t, f.uom('EA'), { itemKind: 'service' });
    const goods = await newItem(t, f.uom('KG'), { itemKind: 'non_stock' });
    const res = await create({
      customerId: customer.id,
      requestedDate: '2027-02-01',
      notes: 'rush',
      lines: [
        { itemId: f.item.id, qty: 3, unitPrice: 0.1 },
        { itemId: boxed.id, qty: 2, uomId: f.uom('BOX'), unitPrice: 0.2 },
        { itemId: service.id, qty: 1, unitPrice: 150 },
        { itemId: goods.id, qty: 0.125, unitPrice: 8 },
      ],
    });
    expect(res.headers.etag).toBe('"1"');
    expect(res.body.data).toEqual({
      id: expect.stringMatching(UUID),
      orderNo: expect.stringMatching(/^SO-\d{6}$/),
      customerId: customer.id,
      facilityId: f.facility.id,
      status: 'draft',
      requestedDate: '2027-02-01',
      notes: 'rush',
      lines: [
        { id: expect.stringMatching(UUID), lineNo: 1, itemId: f.item.id, qty: 3, uomId: f.uom('EA'), unitPrice: 0.1, qtyShipped: 0, reservationId: null },
        { id: expect.stringMatching(UUID), lineNo: 2, itemId: boxed.id, qty: 2, uomId: f.uom('BOX'), unitPrice: 0.2, qtyShipped: 0, reservationId: null },
        { id: expect.stringMatching(UUID), lineNo: 3, itemId: service.id, qty: 1, uomId: f.uom('EA'), unitPrice: 150, qtyShipped: 0, reservationId: null },
        { id: expect.stringMatching(UUID), lineNo: 4, itemId: goods.id, qty: 0.125, uomId: f.uom('KG'), unitPrice: 8, qtyShipped: 0, reservationId: null },
      ],
      totalAmount: 151.7,
      ...auditFields(t.token),
    });
    const again = await t.get(`${SO}/${res.body.data.id}`).expect(200);
    expect(again.body.data).toEqual(res.body.data);
    expect(again.headers.etag).toBe('"1"');
    const bare = (await create({})).body.data;
    expect(bare).toMatchObject({ requestedDate: null, notes: null, lines: [], totalAmount: 0, status: 'draft' });
  });

  it('numbers orders sequentially per tenant, starting at SO-000001', async () => {
    const t2 = await newTenant(ctx);
    const f2 = await inventoryFixture(t2);
    const a = await salesOrderIn(t2, 'draft', { facilityId: f2.facility.id, itemId: f2.item.id });
    const b = await salesOrderIn(t2, 'draft', { facilityId: f2.facility.id, itemId: f2.item.id });
    expect([a.orderNo, b.orderNo]).toEqual(['SO-000001', 'SO-000002']);
  });

  it('refuses bad lines and references: 404 naming the field for unknown ids, 400 for what does not fit', async () => {
    const customer = await newCustomer(t);
    const base = { customerId: customer.id };
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect((await create({ ...base, lines: [{ itemId: unknown, qty: 1, unitPrice: 1 }] }, 404)).body).toMatchObject({ error: 'not_found', details: [{ field: 'lines[0].itemId' }] });
    expect((await create({ ...base, lines: [{ itemId: f.item.id, qty: 1, uomId: unknown, unitPrice: 1 }] }, 404)).body.details).toEqual([expect.objectContaining({ field: 'lines[0].uomId' })]);
    expect((await create({ ...base, lines: [{ itemId: f.item.id, qty: 1, uomId: f.uom('KG'), unitPrice: 1 }] }, 400)).body.details).toEqual([expect.objectContaining({ field: 'lines[0].uomId' })]);
    expect((await create({ ...base, lines: [{ itemId: f.item.id, qty: 1.5, unitPrice: 1 }] }, 400)).body.details).toEqual([expect.objectContaining({ field: 'lines[0].qty' })]);
    await create({ ...base, lines: [{ itemId: f.item.id, unitPrice: 1 }] }, 400);
    await create({ ...base, lines: [{ itemId: f.item.id, qty: 1 }] }, 400);
    await create({ ...base, lines: [{ itemId: f.item.id, qty: 0, unitPrice: 1 }] }, 400);
    await create({ ...base, lines: [{ itemId: f.item.id, qty: 1, unitPrice: -1 }] }, 400);
    await create({ ...base, lines: [{ itemId: f.item.id, qty: 1, unitPrice: 1, discount: 3 }] }, 400);
    await create({ ...base, requestedDate: '2027-02-30' }, 400);
    // null in an optional field is the field left out (CONTRACT §1): no lines.
    expect((await create({ ...base, lines: null }, 201)).body.data.lines).toEqual([]);
    expect((await create({ ...base, facilityId: unknown }, 404)).body.details).toEqual([expect.objectContaining({ field: 'facilityId' })]);
    expect((await create({ customerId: unknown }, 404)).body.details).toEqual([expect.objectContaining({ field: 'customerId' })]);
    await t.post(SO, { facilityId: f.facility.id }).expect(400);
    expect((await t.get(`${SO}?customerId=${customer.id}`).expect(200)).body.count).toBe(1);
  });

  it('refuses an inactive customer, item or facility on new orders and new lines (409)', async () => {
    const inactive = await newCustomer(t, { isActive: false });
    expect((await create({ customerId: inactive.id }, 409)).body).toMatchObject({ error: 'invalid_state', message: expect.stringContaining('inactive') });
    const item = await newItem(t, f.uom('EA'), { isActive: false });
    expect((await create({ lines: [{ itemId: item.id, qty: 1, unitPrice: 1 }] }, 409)).body.error).toBe('invalid_state');
    const closed = (await t.post('/v1/facilities', { code: `CLOSED-${Date.now()}`, name: 'Closed', isActive: false }).expect(201)).body.data;
    await create({ facilityId: closed.id }, 409);
    const draft = await salesOrderIn(t, 'draft', { facilityId: f.facility.id, itemId: f.item.id });
    await t.patch(`${SO}/${draft.id}`, { lines: [{ itemId: item.id, qty: 1, unitPrice: 1 }] }).expect(409);
    await t.patch(`${SO}/${draft.id}`, { customerId: inactive.id }).expect(409);
    await t.patch(`${SO}/${draft.id}`, { facilityId: closed.id }).expect(409);
    expect(await order(draft.id)).toMatchObject({ version: 1, lines: [{ itemId: f.item.id }] });
  });

  it('PATCH changes a draft only: lines replaced, total recomputed, version, ETag and If-Match', async () => {
    const draft = await salesOrderIn(t, 'draft', { facilityId: f.facility.id, itemId: f.item.id });
    const customer = await newCustomer(t);
    const res = await t
      .patch(`${SO}/${draft.id}`, { customerId: customer.id, requestedDate: '2027-05-04', notes: 'changed', lines: [{ itemId: f.item.id, qty: 4, unitPrice: 1.25 }, { itemId: f.item.id, qty: 1, unitPrice: 0.3 }] })
      .set('If-Match', '"1"')
      .expect(200);
    expect(res.body.data).toMatchObject({
      version: 2, customerId: customer.id, requestedDate: '2027-05-04', notes: 'changed', totalAmount: 5.3,
      lines: [{ lineNo: 1, qty: 4, unitPrice: 1.25 }, { lineNo: 2, qty: 1, unitPrice: 0.3 }],
    });
    expect(res.body.data.lines.map((l: { id: string }) => l.id)).not.toContain(draft.lines[0].id);
    expect(res.headers.etag).toBe('"2"');
    expect((await t.patch(`${SO}/${draft.id}`, { notes: 'stale' }).set('If-Match', '"1"').expect(412)).body.error).toBe('version_conflict');
    // Fields not given stay; null clears.
    expect((await t.patch(`${SO}/${draft.id}`, { notes: null }).expect(200)).body.data).toMatchObject({ version: 3, requestedDate: '2027-05-04', notes: null, totalAmount: 5.3 });
    expect((await t.patch(`${SO}/${draft.id}`, { requestedDate: null, lines: [] }).expect(200)).body.data).toMatchObject({ requestedDate: null, lines: [], totalAmount: 0 });
  });

  it('every action from a wrong state is 409 naming the state and changes nothing; If-Match on every action', async () => {
    const empty = (await create({})).body.data;
    expect((await action(empty.id, 'open', 409)).body).toMatchObject({ error: 'invalid_state', message: expect.stringMatching(/no lines/) });

    const item = await stocked(10);
    const draft = await salesOrderIn(t, 'draft', { facilityId: f.facility.id, itemId: item.id });
    expect((await ship(draft.id, undefined, 409)).body.message).toMatch(/is draft/);
    await action(draft.id, 'open', 412, { ifMatch: '"7"' });
    const opened = await action(draft.id, 'open', 200, { ifMatch: '"1"' });
    expect(opened.body.data).toMatchObject({ status: 'open', version: 2 });
    expect(opened.headers.etag).toBe('"2"');
    expect((await action(draft.id, 'open', 409)).body.message).toMatch(/is open/);
    expect((await t.patch(`${SO}/${draft.id}`, { notes: 'late' }).expect(409)).body.message).toMatch(/is open/);
    await ship(draft.id, [{ lineId: draft.lines[0].id, qty: 1 }]);
    expect((await action(draft.id, 'open', 409)).body.message).toMatch(/is partially_shipped/);
    await action(draft.id, 'ship', 412, { ifMatch: '"2"' });
    await action(draft.id, 'cancel', 412, { ifMatch: '"2"' });
    expect((await action(draft.id, 'ship', 200, { ifMatch: '"3"' })).body.data).toMatchObject({ status: 'shipped', version: 4 });
    for (const wrong of ['open', 'ship', 'cancel']) expect((await action(draft.id, wrong, 409)).body.message).toMatch(/is shipped/);
    await t.patch(`${SO}/${draft.id}`, { notes: 'late' }).expect(409);

    const cancelled = await salesOrderIn(t, 'cancelled', { facilityId: f.facility.id, itemId: item.id });
    for (const wrong of ['open', 'ship', 'cancel']) expect((await action(cancelled.id, wrong, 409)).body.message).toMatch(/is cancelled/);
    expect((await t.patch(`${SO}/${cancelled.id}`, { notes: 'x' }).expect(409)).body.message).toMatch(/is cancelled/);
    expect(await order(cancelled.id)).toMatchObject({ status: 'cancelled', version: 2, notes: null });
    expect(await atp(item.id)).toEqual(position(item.id, 8, 0, 0));
  });

  it('open reserves every stock line at the facility in base units (a BOX line holds 12 per box); service lines are carried, never reserved', async () => {
    const item = await stocked(10);
    const boxed = await stocked(30, { uomConversions: [{ uomId: f.uom('BOX'), factor: 12 }] });
    const service = await newItem(t, f.uom('EA'), { itemKind: 'service' });
    const draft = await salesOrderIn(t, 'draft', {
      facilityId: f.facility.id,
      lines: [{ itemId: item.id, qty: 4, unitPrice: 2 }, { itemId: boxed.id, qty: 2, uomId: f.uom('BOX'), unitPrice: 30 }, { itemId: service.id, qty: 1, unitPrice: 9 }],
    });
    const opened = (await action(draft.id, 'open')).body.data;
    expect(opened).toMatchObject({ status: 'open', version: 2, totalAmount: 77 });
    const [l1, l2, l3] = opened.lines;
    expect([l1.reservationId, l2.reservationId]).toEqual([expect.stringMatching(UUID), expect.stringMatching(UUID)]);
    expect(l3.reservationId).toBeNull();
    const rows = await holds(draft.id);
    expect(rows).toHaveLength(2);
    const common = { facilityId: f.facility.id, qtyAllocated: 0, qtyFulfilled: 0, status: 'open', demandType: 'sales_order', demandId: draft.id, allocations: [], expiresAt: null };
    expect(rows.find((r: { id: string }) => r.id === l1.reservationId)).toMatchObject({ ...common, itemId: item.id, qty: 4, demandLineId: l1.id });
    expect(rows.find((r: { id: string }) => r.id === l2.reservationId)).toMatchObject({ ...common, itemId: boxed.id, qty: 24, demandLineId: l2.id });
    expect(await atp(item.id)).toEqual(position(item.id, 10, 0, 4));
    expect(await atp(boxed.id)).toEqual(position(boxed.id, 30, 0, 24));

    // One box ships as 12 base units; the rest ships the other box.
    const first = (await ship(draft.id, [{ lineId: l2.id, qty: 1 }])).body.data;
    expect(first).toMatchObject({ status: 'partially_shipped', lines: [{ qtyShipped: 0 }, { qtyShipped: 1 }, { qtyShipped: 0 }] });
    expect(await onHand(t, { itemId: boxed.id, locationId: f.location.id })).toBe(18);
    expect(await reservation(l2.reservationId)).toMatchObject({ qty: 24, qtyFulfilled: 12, status: 'allocated', qtyAllocated: 12 });
    await ship(draft.id);
    expect(await onHand(t, { itemId: boxed.id, locationId: f.location.id })).toBe(6);
    expect(await reservation(l2.reservationId)).toMatchObject({ qty: 24, qtyFulfilled: 24, qtyAllocated: 0, status: 'fulfilled' });
    const txns = await transactionsOf(t, draft.id);
    expect(txns.data.map((x) => x.lines.map((l) => [l.itemId, l.locationId, l.qtyDelta]))).toEqual([
      [[item.id, f.location.id, -4], [boxed.id, f.location.id, -12]],
      [[boxed.id, f.location.id, -12]],
    ]);
    expect(await atp(boxed.id)).toEqual(position(boxed.id, 6, 0, 0));
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it('open is all or nothing: two short lines are one 409 insufficient_stock naming both; nothing stays reserved, the order stays draft', async () => {
    const a = await stocked(3);
    const b = await stocked(5);
    const c = await stocked(10);
    const draft = await salesOrderIn(t, 'draft', {
      facilityId: f.facility.id,
      lines: [{ itemId: c.id, qty: 2, unitPrice: 1 }, { itemId: a.id, qty: 4, unitPrice: 1 }, { itemId: b.id, qty: 6, unitPrice: 1 }],
    });
    const res = (await action(draft.id, 'open', 409)).body;
    expect(res).toMatchObject({ error: 'insufficient_stock', status: 409, message: expect.stringContaining(draft.orderNo) });
    expect(res.details).toEqual([
      expect.objectContaining({ field: 'lines[1]', lineId: draft.lines[1].id, lineNo: 2, itemId: a.id, facilityId: f.facility.id, requested: 4, available: 3 }),
      expect.objectContaining({ field: 'lines[2]', lineId: draft.lines[2].id, lineNo: 3, itemId: b.id, facilityId: f.facility.id, requested: 6, available: 5 }),
    ]);
    expect(await holds(draft.id)).toEqual([]);
    const [{ n }] = await sql(`SELECT count(*)::int AS n FROM reservations WHERE tenant_id = $1 AND demand_id = $2`, [t.tenantId, draft.id]);
    expect(n).toBe(0);
    expect(await order(draft.id)).toMatchObject({ status: 'draft', version: 1, lines: [{ reservationId: null }, { reservationId: null }, { reservationId: null }] });
    expect(await atp(c.id)).toEqual(position(c.id, 10, 0, 0));

    // Two lines of one item are judged together: each fits, both do not.
    const twice = await salesOrderIn(t, 'draft', { facilityId: f.facility.id, lines: [{ itemId: c.id, qty: 6, unitPrice: 1 }, { itemId: c.id, qty: 5, unitPrice: 1 }] });
    expect((await action(twice.id, 'open', 409)).body.details).toEqual([
      expect.objectContaining({ field: 'lines[0]', requested: 6, available: 10 }),
      expect.objectContaining({ field: 'lines[1]', requested: 5, available: 10 }),
    ]);
    // Stock at another facility does not count; once there is enough, the same order opens.
    await adjust(t, { itemId: a.id, locationId: other.location.id, qtyDelta: 50 });
    await action(draft.id, 'open', 409);
    await adjust(t, { itemId: a.id, locationId: f.location.id, qtyDelta: 1 });
    await adjust(t, { itemId: b.id, locationId: f.locations[1].id, qtyDelta: 1 });
    expect((await action(draft.id, 'open')).body.data.status).toBe('open');
    expect(await holds(draft.id)).toHaveLength(3);
    expect(await atp(a.id)).toEqual(position(a.id, 4, 0, 4));
  });

  it('ships partially from a named location, then everything outstanding (allocating earliest expiry first); one shipment per call', async () => {
    const item = await stocked(5);
    await adjust(t, { itemId: item.id, locationId: f.locations[1].id, qtyDelta: 5 });
    const goods = await newItem(t, f.uom('EA'), { itemKind: 'non_stock' });
    const opened = await salesOrderIn(t, 'open', { facilityId: f.facility.id, lines: [{ itemId: item.id, qty: 8, unitPrice: 1 }, { itemId: goods.id, qty: 3, unitPrice: 1 }] });
    const [line, extra] = opened.lines;
    expect(extra.reservationId).toBeNull();
    expect(await atp(item.id)).toEqual(position(item.id, 10, 0, 8));

    const first = await ship(opened.id, [{ lineId: line.id, qty: 3, locationId: f.locations[1].id }, { lineId: extra.id, qty: 1 }]);
    expect(first.headers.etag).toBe('"3"');
    expect(first.body.data).toMatchObject({ status: 'partially_shipped', version: 3, lines: [{ qtyShipped: 3 }, { qtyShipped: 1 }] });
    let txns = await transactionsOf(t, opened.id);
    expect(txns.count).toBe(1);
    expect(txns.data[0]).toMatchObject({ type: 'shipment', sourceType: 'sales_order', sourceId: opened.id });
    expect(txns.data[0].lines).toEqual([expect.objectContaining({ lineNo: 1, itemId: item.id, locationId: f.locations[1].id, lotId: null, qtyDelta: -3 })]);
    expect(await onHand(t, { itemId: item.id, locationId: f.location.id })).toBe(5);
    expect(await onHand(t, { itemId: item.id, locationId: f.locations[1].id })).toBe(2);
    expect(await reservation(line.reservationId!)).toMatchObject({ qty: 8, qtyAllocated: 0, qtyFulfilled: 3, status: 'open' });
    expect(await atp(item.id)).toEqual(position(item.id, 7, 0, 5));

    const second = (await ship(opened.id)).body.data;
    expect(second).toMatchObject({ status: 'shipped', version: 4, lines: [{ qtyShipped: 8 }, { qtyShipped: 3 }] });
    txns = await transactionsOf(t, opened.id);
    expect(txns.count).toBe(2);
    // No expiries: the location code decides (B-1 before B-2).
    expect(txns.data[0].lines).toEqual([expect.objectContaining({ lineNo: 1, itemId: item.id, locationId: f.location.id, qtyDelta: -5 })]);
    expect(await onHand(t, { itemId: item.id, locationId: f.location.id })).toBe(0);
    expect(await onHand(t, { itemId: item.id, locationId: f.locations[1].id })).toBe(2);
    expect(await reservation(line.reservationId!)).toMatchObject({ qty: 8, qtyAllocated: 0, qtyFulfilled: 8, status: 'fulfilled', allocations: [] });
    expect(await holds(opened.id)).toEqual([]);
    expect(await atp(item.id)).toEqual(position(item.id, 2, 0, 0));
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it('ships a named line and an automatic line of one item in one call: the automatic one goes on past the stock the named one took', async () => {
    // B-1, B-2, then a third location: the planner's order when nothing expires. The named line takes B-1's
    // stock, so the automatic line must reach B-2 (allocation reads the planner's order as far as both
    // lines together need, not only as far as the automatic one does).
    const third = (await t.post(`/v1/facilities/${f.facility.id}/locations`, { code: `B-3-${Date.now()}`, name: 'Bin 3' }).expect(201)).body.data;
    const item = await stocked(2);
    await adjust(t, { itemId: item.id, locationId: f.locations[1].id, qtyDelta: 2 });
    await adjust(t, { itemId: item.id, locationId: third.id, qtyDelta: 5 });
    const opened = await salesOrderIn(t, 'open', { facilityId: f.facility.id, lines: [{ itemId: item.id, qty: 2, unitPrice: 1 }, { itemId: item.id, qty: 2, unitPrice: 1 }] });
    const [named, automatic] = opened.lines;
    const shipped = (await ship(opened.id, [{ lineId: named.id, qty: 2, locationId: f.location.id }, { lineId: automatic.id, qty: 2 }])).body.data;
    expect(shipped).toMatchObject({ status: 'shipped', lines: [{ qtyShipped: 2 }, { qtyShipped: 2 }] });
    const [txn] = (await transactionsOf(t, opened.id)).data;
    const from = txn.lines.map((l: { locationId: string; qtyDelta: number }) => [l.locationId, l.qtyDelta]);
    expect(from.sort()).toEqual([[f.location.id, -2], [f.locations[1].id, -2]].sort());
    expect(await onHand(t, { itemId: item.id, locationId: third.id })).toBe(5);
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it('ships lot-tracked stock earliest expiry first, or from a named lot and location', async () => {
    const item = await newItem(t, f.uom('EA'), { lotTracking: 'required', expiryTracking: 'required' });
    await adjust(t, { itemId: item.id, locationId: f.location.id, qtyDelta: 5, lotNo: 'LATE', expiryDate: '2031-01-01' });
    await adjust(t, { itemId: item.id, locationId: f.locations[1].id, qtyDelta: 5, lotNo: 'SOON', expiryDate: '2030-01-01' });
    const late = await lotId(t, item.id, 'LATE');
    const soon = await lotId(t, item.id, 'SOON');
    const opened = await salesOrderIn(t, 'open', { facilityId: f.facility.id, lines: [{ itemId: item.id, qty: 8, unitPrice: 1 }] });
    const lineId = opened.lines[0].id;
    await ship(opened.id, [{ lineId, qty: 1, locationId: f.location.id }], 400); // a lot-tracked item names its lot where it is not yet allocated
    await ship(opened.id, [{ lineId, qty: 1, locationId: f.location.id, lotId: soon }], 409); // SOON is not at B-1
    await ship(opened.id, [{ lineId, qty: 2, locationId: f.location.id, lotId: late }]);
    await ship(opened.id);
    const txns = await transactionsOf(t, opened.id);
    expect(txns.data.map((x) => x.lines.map((l) => [l.locationId, l.lotId, l.qtyDelta]))).toEqual([
      [[f.locations[1].id, soon, -5], [f.location.id, late, -1]],
      [[f.location.id, late, -2]],
    ]);
    expect(await onHand(t, { itemId: item.id, locationId: f.location.id, lotId: late })).toBe(2);
    expect((await order(opened.id)).status).toBe('shipped');
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it('refuses ship lines that do not fit; more than outstanding is 409 naming the line, and nothing is posted', async () => {
    const item = await stocked(10);
    const goods = await newItem(t, f.uom('EA'), { itemKind: 'non_stock' });
    const opened = await salesOrderIn(t, 'open', { facilityId: f.facility.id, lines: [{ itemId: item.id, qty: 5, unitPrice: 1 }, { itemId: goods.id, qty: 2, unitPrice: 1 }] });
    const foreign = await salesOrderIn(t, 'open', { facilityId: f.facility.id, itemId: item.id });
    const [line, extra] = opened.lines;
    await ship(opened.id, [{ lineId: line.id, qty: 2 }]);

    const over = (await ship(opened.id, [{ lineId: extra.id, qty: 1 }, { lineId: line.id, qty: 2 }, { lineId: line.id, qty: 2 }], 409)).body;
    expect(over).toMatchObject({ error: 'invalid_state', message: expect.stringMatching(/line 1 has 3 outstanding; cannot ship 4/) });
    expect(over.details).toEqual([expect.objectContaining({ field: 'lines[2].qty', lineId: line.id, lineNo: 1, requested: 4, outstanding: 3 })]);
    expect((await ship(opened.id, [{ lineId: extra.id, qty: 3 }], 409)).body.message).toMatch(/line 2 has 2 outstanding/);
    expect((await ship(opened.id, [{ lineId: foreign.lines[0].id, qty: 1 }], 404)).body.details).toEqual([expect.objectContaining({ field: 'lines[0].lineId' })]);
    expect((await ship(opened.id, [{ lineId: extra.id, qty: 1, locationId: f.location.id }], 400)).body.details).toEqual([expect.objectContaining({ field: 'lines[0].locationId' })]);
    expect((await ship(opened.id, [{ lineId: line.id, qty: 1, locationId: other.location.id }], 400)).body.details).toEqual([expect.objectContaining({ field: 'lines[0].locationId' })]);
    expect((await ship(opened.id, [{ lineId: line.id, qty: 1, locationId: '00000000-0000-4000-8000-000000000000' }], 404)).body.details).toEqual([expect.objectContaining({ field: 'lines[0].locationId' })]);
    expect((await ship(opened.id, [{ lineId: line.id, qty: 1, serialNos: ['S-1'] }], 400)).body.details).toEqual([expect.objectContaining({ field: 'lines[0].serialNos' })]);
    await ship(opened.id, [{ lineId: line.id, qty: 0.5 }], 400);
    await ship(opened.id, [{ lineId: line.id }], 400);
    // Stock that is not there: the hold's allocation at that location fails, naming the line.
    expect((await ship(opened.id, [{ lineId: line.id, qty: 1, locationId: f.locations[1].id }], 409)).body).toMatchObject({
      error: 'insufficient_stock', details: [expect.objectContaining({ field: 'lines[0].qty' })],
    });

    expect((await transactionsOf(t, opened.id)).count).toBe(1);
    expect(await onHand(t, { itemId: item.id, locationId: f.location.id })).toBe(8);
    expect(await order(opened.id)).toMatchObject({ status: 'partially_shipped', version: 3, lines: [{ qtyShipped: 2 }, { qtyShipped: 0 }] });
    expect(await reservation(line.reservationId!)).toMatchObject({ qty: 5, qtyFulfilled: 2 });
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it('ships an open line at its own UOM ratio after the item\'s conversion changes or goes (the order finishes as committed)', async () => {
    const BOX = f.uom('BOX');
    const gone = await stocked(24, { uomConversions: [{ uomId: BOX, factor: 12 }] });
    const changed = await stocked(36, { uomConversions: [{ uomId: BOX, factor: 12 }] });
    const opened = await salesOrderIn(t, 'open', {
      facilityId: f.facility.id,
      lines: [{ itemId: gone.id, qty: 2, uomId: BOX, unitPrice: 1 }, { itemId: changed.id, qty: 3, uomId: BOX, unitPrice: 1 }],
    });
    const [first, second] = opened.lines.map((l) => l.id);
    const shipped = async () => (await transactionsOf(t, opened.id)).data[0].lines.map((l) => [l.itemId, l.qtyDelta]);
    await ship(opened.id, [{ lineId: first, qty: 1 }, { lineId: second, qty: 1 }]);
    await t.patch(`/v1/items/${gone.id}`, { uomConversions: [] }).expect(200);
    await t.patch(`/v1/items/${changed.id}`, { uomConversions: [{ uomId: BOX, factor: 10 }] }).expect(200);
    // Still in the line's unit: a BOX takes whole numbers, as when the line was written.
    expect((await ship(opened.id, [{ lineId: first, qty: 0.5 }], 400)).body.details).toEqual([expect.objectContaining({ field: 'lines[0].qty' })]);
    // 24 / 2 and 36 / 3 base units per BOX, as ordered: not 400 for the conversion gone, nor 10 at the new factor.
    await ship(opened.id, [{ lineId: first, qty: 1 }, { lineId: second, qty: 1 }]);
    expect(await shipped()).toEqual([[gone.id, -12], [changed.id, -12]]);
    expect((await ship(opened.id, [{ lineId: second, qty: 1 }])).body.data).toMatchObject({ status: 'shipped', lines: [{ qtyShipped: 2 }, { qtyShipped: 3 }] });
    expect(await shipped()).toEqual([[changed.id, -12]]);
    expect(await onHand(t, { itemId: gone.id, locationId: f.location.id })).toBe(0);
    expect(await onHand(t, { itemId: changed.id, locationId: f.location.id })).toBe(0);
    expect(await holds(opened.id)).toEqual([]);
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it('ship lines take JSON null as absent, and an empty serialNos as absent for items that are not serial-tracked', async () => {
    const item = await stocked(5);
    const goods = await newItem(t, f.uom('EA'), { itemKind: 'non_stock' });
    const opened = await salesOrderIn(t, 'open', { facilityId: f.facility.id, lines: [{ itemId: item.id, qty: 3, unitPrice: 1 }, { itemId: goods.id, qty: 3, unitPrice: 1 }] });
    const [line, extra] = opened.lines.map((l) => l.id);
    await ship(opened.id, [{ lineId: line, qty: 1, serialNos: [] }, { lineId: extra, qty: 1, serialNos: [] }]);
    await ship(opened.id, [{ lineId: line, qty: 1, locationId: null, lotId: null, serialNos: null }, { lineId: extra, qty: 1, locationId: null, lotId: null, serialNos: null }]);
    expect(await order(opened.id)).toMatchObject({ status: 'partially_shipped', lines: [{ qtyShipped: 2 }, { qtyShipped: 2 }] });
    expect(await onHand(t, { itemId: item.id, locationId: f.location.id })).toBe(3);
  });

  it('cancel releases the holds of an open and of a partially shipped order; shipped stock stays shipped', async () => {
    const item = await stocked(10);
    const opened = await salesOrderIn(t, 'open', { facilityId: f.facility.id, lines: [{ itemId: item.id, qty: 3, unitPrice: 1 }] });
    const partly = await salesOrderIn(t, 'open', { facilityId: f.facility.id, lines: [{ itemId: item.id, qty: 4, unitPrice: 1 }, { itemId: item.id, qty: 1, unitPrice: 1 }] });
    await ship(partly.id, [{ lineId: partly.lines[0].id, qty: 1 }, { lineId: partly.lines[1].id, qty: 1 }]);
    expect(await atp(item.id)).toEqual(position(item.id, 8, 3, 3));
    expect(await reservation(partly.lines[1].reservationId!)).toMatchObject({ status: 'fulfilled' });

    const c1 = (await action(opened.id, 'cancel', 200, { ifMatch: '"2"' })).body.data;
    expect(c1).toMatchObject({ status: 'cancelled', version: 3, lines: [{ qtyShipped: 0, reservationId: opened.lines[0].reservationId }] });
    expect(await reservation(opened.lines[0].reservationId!)).toMatchObject({ status: 'cancelled', qtyAllocated: 0, qtyFulfilled: 0 });
    expect(await atp(item.id)).toEqual(position(item.id, 8, 3, 0));

    const c2 = (await action(partly.id, 'cancel')).body.data;
    expect(c2).toMatchObject({ status: 'cancelled', lines: [{ qtyShipped: 1 }, { qtyShipped: 1 }] });
    expect(await reservation(partly.lines[0].reservationId!)).toMatchObject({ status: 'cancelled', qtyFulfilled: 1, qtyAllocated: 0, allocations: [] });
    expect(await reservation(partly.lines[1].reservationId!)).toMatchObject({ status: 'fulfilled', qtyFulfilled: 1 });
    expect(await holds(partly.id)).toEqual([]);
    expect(await holds(partly.id, 'cancelled')).toHaveLength(1);
    expect(await atp(item.id)).toEqual(position(item.id, 8, 0, 0));
    expect(await onHand(t, { itemId: item.id, locationId: f.location.id })).toBe(8);
    expect((await transactionsOf(t, partly.id)).count).toBe(1);

    // A draft cancels without any hold.
    const draft = await salesOrderIn(t, 'cancelled', { facilityId: f.facility.id, itemId: item.id });
    expect(draft.lines[0].reservationId).toBeNull();
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it('an order of non-stock and service lines opens and ships without any stock, hold or posting', async () => {
    const goods = await newItem(t, f.uom('EA'), { itemKind: 'non_stock' });
    const service = await newItem(t, f.uom('EA'), { itemKind: 'service' });
    const opened = await salesOrderIn(t, 'open', { facilityId: f.facility.id, lines: [{ itemId: goods.id, qty: 2, unitPrice: 4 }, { itemId: service.id, qty: 1, unitPrice: 10 }] });
    expect(opened.lines.map((l) => l.reservationId)).toEqual([null, null]);
    expect(await holds(opened.id)).toEqual([]);
    expect((await ship(opened.id, [{ lineId: opened.lines[1].id, qty: 1 }])).body.data.status).toBe('partially_shipped');
    expect((await ship(opened.id)).body.data).toMatchObject({ status: 'shipped', lines: [{ qtyShipped: 2 }, { qtyShipped: 1 }] });
    expect((await transactionsOf(t, opened.id)).count).toBe(0);
  });

  it('an open order still ships after its item, customer and facility are deactivated; a draft with a deactivated item cannot open', async () => {
    const item = await stocked(6);
    const customer = await newCustomer(t);
    const fac = await facilityWithLocations(t, 1);
    await adjust(t, { itemId: item.id, locationId: fac.location.id, qtyDelta: 4 });
    const opened = await salesOrderIn(t, 'open', { facilityId: fac.facility.id, customerId: customer.id, lines: [{ itemId: item.id, qty: 4, unitPrice: 1 }] });
    const draft = await salesOrderIn(t, 'draft', { facilityId: f.facility.id, itemId: item.id });
    await t.patch(`/v1/items/${item.id}`, { isActive: false }).expect(200);
    await t.patch(`/v1/sales/customers/${customer.id}`, { isActive: false }).expect(200);
    await t.patch(`/v1/facilities/${fac.facility.id}`, { isActive: false }).expect(200);
    expect((await ship(opened.id)).body.data.status).toBe('shipped');
    expect(await onHand(t, { itemId: item.id, locationId: fac.location.id })).toBe(0);
    expect((await action(draft.id, 'open', 409)).body).toMatchObject({ error: 'invalid_state', message: expect.stringContaining('inactive') });
    expect(await holds(draft.id)).toEqual([]);
  });

  it('lists with filters status, customerId, facilityId and q on the order number and the customer name, newest first', async () => {
    const t2 = await newTenant(ctx);
    const f2 = await inventoryFixture(t2);
    const fac2 = await facilityWithLocations(t2, 1);
    const acme = await newCustomer(t2, { name: 'Acme Retail' });
    const bolt = await newCustomer(t2, { name: 'Bolt & Nut Co' });
    const a = await salesOrderIn(t2, 'draft', { facilityId: f2.facility.id, itemId: f2.item.id, customerId: acme.id });
    const b = await salesOrderIn(t2, 'cancelled', { facilityId: fac2.facility.id, itemId: f2.item.id, customerId: bolt.id });
    const c = await salesOrderIn(t2, 'open', { facilityId: f2.facility.id, itemId: f2.item.id, customerId: bolt.id, stockAt: f2.location.id });
    const ids = async (query: string) => {
      const body = (await t2.get(`${SO}${query}`).expect(200)).body;
      expect(body.count).toBe(body.data.length);
      return body.data.map((o: { id: string }) => o.id);
    };
    expect(await ids('')).toEqual([c.id, b.id, a.id]);
    expect(await ids('?status=cancelled')).toEqual([b.id]);
    expect(await ids(`?customerId=${bolt.id}`)).toEqual([c.id, b.id]);
    expect(await ids(`?facilityId=${fac2.facility.id}`)).toEqual([b.id]);
    expect(await ids('?q=retail')).toEqual([a.id]);
    expect(await ids(`?q=${b.orderNo.toLowerCase()}`)).toEqual([b.id]);
    expect(await ids('?q=nut%20co&status=open')).toEqual([c.id]);
    expect(await ids('?q=%25')).toEqual([]);
    const paged = (await t2.get(`${SO}?limit=1&offset=1`).expect(200)).body;
    expect(paged).toMatchObject({ count: 3, limit: 1, offset: 1, data: [{ id: b.id, lines: [{ itemId: f2.item.id }] }] });
    await t2.get(`${SO}?status=closed`).expect(400);
    await t2.get(`${SO}?customerId=nope`).expect(400);
    await t2.get(`${SO}?limit=0`).expect(400);
  });

  it("isolates tenants: another tenant's orders are 404 on every route, and its items, facilities and customers are unusable as references", async () => {
    const item = await stocked(5);
    const opened = await salesOrderIn(t, 'open', { facilityId: f.facility.id, itemId: item.id });
    const t2 = await newTenant(ctx);
    const f2 = await inventoryFixture(t2);
    const customer2 = await newCustomer(t2);
    await t2.get(`${SO}/${opened.id}`).expect(404);
    await t2.patch(`${SO}/${opened.id}`, { notes: 'x' }).expect(404);
    for (const a of ['open', 'ship', 'cancel']) await t2.post(`${SO}/${opened.id}/${a}`).expect(404);
    expect((await t2.get(SO).expect(200)).body.count).toBe(0);
    const mine = { customerId: customer2.id, facilityId: f2.facility.id };
    expect((await t2.post(SO, { ...mine, lines: [{ itemId: item.id, qty: 1, unitPrice: 1 }] }).expect(404)).body.details).toEqual([expect.objectContaining({ field: 'lines[0].itemId' })]);
    expect((await t2.post(SO, { ...mine, facilityId: f.facility.id }).expect(404)).body.details).toEqual([expect.objectContaining({ field: 'facilityId' })]);
    const own = await salesOrderIn(t2, 'open', { facilityId: f2.facility.id, itemId: f2.item.id, customerId: customer2.id, stockAt: f2.location.id });
    expect((await t2.post(`${SO}/${own.id}/ship`, { lines: [{ lineId: opened.lines[0].id, qty: 1 }] }).expect(404)).body.details).toEqual([
      expect.objectContaining({ field: 'lines[0].lineId' }),
    ]);
    expect((await order(opened.id)).status).toBe('open');
    await t2.get(`${SO}/not-a-uuid`).expect(404);
  });

  it('permissions: sales:read for GET, sales:write for POST, PATCH and actions', async () => {
    const item = await stocked(2);
    const draft = await salesOrderIn(t, 'draft', { facilityId: f.facility.id, itemId: item.id });
    const as = async (permissions: string[]) => {
      const token = await ctx.idp.token({ tenantId: t.tenantId, permissions });
      return (method: 'get' | 'post' | 'patch', url: string, body?: object) => ctx.http[method](url).set('Authorization', `Bearer ${token}`).send(body);
    };
    const reader = await as(['sales:read', 'inventory:write', 'procurement:write']);
    expect((await reader('get', SO)).status).toBe(200);
    expect((await reader('get', `${SO}/${draft.id}`)).status).toBe(200);
    expect((await reader('post', SO, {})).status).toBe(403);
    expect((await reader('patch', `${SO}/${draft.id}`, {})).status).toBe(403);
    for (const a of ['open', 'ship', 'cancel']) expect((await reader('post', `${SO}/${draft.id}/${a}`)).status).toBe(403);
    const writer = await as(['sales:write']);
    expect((await writer('get', SO)).status).toBe(403);
    expect((await writer('get', `${SO}/${draft.id}`)).status).toBe(403);
    expect((await writer('post', `${SO}/${draft.id}/open`)).status).toBe(200);
    expect(await order(draft.id)).toMatchObject({ status: 'open' });
  });

  it('two orders opened in parallel for more than the stock: exactly one opens; the database agrees', async () => {
    const item = await stocked(5);
    const customer = await newCustomer(t);
    const drafts = await Promise.all(
      [1, 2].map(() => salesOrderIn(t, 'draft', { facilityId: f.facility.id, customerId: customer.id, lines: [{ itemId: item.id, qty: 4, unitPrice: 1 }] })),
    );
    const results = await Promise.all(drafts.map((d) => t.post(`${SO}/${d.id}/open`)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const refused = results.find((r) => r.status === 409)!;
    expect(refused.body).toMatchObject({ error: 'insufficient_stock', details: [expect.objectContaining({ itemId: item.id, requested: 4, available: 1 })] });
    const [held] = await sql(
      `SELECT coalesce(sum(qty - qty_fulfilled), 0)::float AS reserved, count(*)::int AS n FROM reservations
        WHERE tenant_id = $1 AND item_id = $2 AND status IN ('open', 'allocated')`,
      [t.tenantId, item.id],
    );
    expect(held).toEqual({ reserved: 4, n: 1 });
    const [stock] = await sql(`SELECT sum(qty_on_hand)::float AS q FROM balances WHERE tenant_id = $1 AND item_id = $2`, [t.tenantId, item.id]);
    expect(held.reserved).toBeLessThanOrEqual(stock.q);
    expect(await atp(item.id)).toEqual(position(item.id, 5, 0, 4));
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it('parallel ship calls on one order never ship more than ordered; the database agrees', async () => {
    const item = await stocked(10);
    const opened = await salesOrderIn(t, 'open', { facilityId: f.facility.id, lines: [{ itemId: item.id, qty: 10, unitPrice: 1 }] });
    const results = await Promise.all(Array.from({ length: 6 }, () => t.post(`${SO}/${opened.id}/ship`, { lines: [{ lineId: opened.lines[0].id, qty: 4 }] })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.error).toBe('invalid_state');
    const [line] = await sql(`SELECT qty_shipped::float AS shipped, qty_shipped_base::float AS base FROM sales_order_lines WHERE id = $1`, [opened.lines[0].id]);
    expect(line).toEqual({ shipped: 8, base: 8 });
    const [ledger] = await sql(`SELECT sum(qty_delta)::float AS q FROM ledger_lines WHERE tenant_id = $1 AND item_id = $2`, [t.tenantId, item.id]);
    expect(ledger.q).toBe(2);
    expect((await transactionsOf(t, opened.id)).count).toBe(2);
    expect(await reservation(opened.lines[0].reservationId!)).toMatchObject({ qty: 10, qtyFulfilled: 8 });
    expect(await atp(item.id)).toEqual(position(item.id, 2, 2, 0));
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it('is described in the OpenAPI document under the sales tag, with If-Match on PATCH and every action', async () => {
    const doc = (await ctx.http.get('/openapi.json').expect(200)).body;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining([
      '/v1/sales/customers', '/v1/sales/customers/{id}', SO, `${SO}/{id}`, `${SO}/{id}/open`, `${SO}/{id}/ship`, `${SO}/{id}/cancel`,
    ]));
    for (const [path, method] of [[`${SO}/{id}`, 'patch'], [`${SO}/{id}/open`, 'post'], [`${SO}/{id}/ship`, 'post'], [`${SO}/{id}/cancel`, 'post'], ['/v1/sales/customers/{id}', 'patch']]) {
      const op = doc.paths[path][method];
      expect(op.tags).toEqual(['sales']);
      expect(op.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'If-Match', in: 'header' })]));
    }
    expect(doc.paths[`${SO}/{id}/open`].post.description).toContain('insufficient_stock');
    expect(doc.components.schemas.CreateSalesOrderDto.required).toEqual(expect.arrayContaining(['customerId', 'facilityId']));
    const status = doc.paths[SO].get.parameters.find((p: { name: string }) => p.name === 'status');
    expect(status.schema.enum).toEqual(['draft', 'open', 'partially_shipped', 'shipped', 'cancelled']);
  });
});
