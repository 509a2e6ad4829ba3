import { newTenant, startApp, Tenant, TestContext } from '../support/app';
import {
  adjust, facilityWithLocations, FacilityFixture, InventoryFixture, inventoryFixture, lotId, newItem, newSupplier, onHand, purchaseOrderIn,
  transactionsOf,
} from '../support/fixtures';
import { auditFields, ISO_MS, UUID } from '../support/matchers';

describe('Purchase orders and receipts', () => {
  let ctx: TestContext;
  let t: Tenant;
  let f: InventoryFixture;
  let other: FacilityFixture;

  beforeAll(async () => {
    ctx = await startApp();
    t = await newTenant(ctx);
    f = await inventoryFixture(t, { locations: 2 });
    other = await facilityWithLocations(t, 1);
  });
  afterAll(() => ctx.close());

  const PO = '/v1/procurement/purchase-orders';
  const create = (body: Record<string, unknown>, status = 201) => t.post(PO, { facilityId: f.facility.id, ...body }).expect(status);
  const action = (id: string, name: string, status = 200, headers: Record<string, string> = {}) =>
    t.post(`${PO}/${id}/${name}`).set(headers).expect(status);
  const receive = (id: string, lines: Array<Record<string, unknown>>, status = 201) => t.post(`${PO}/${id}/receipts`, { lines }).expect(status);

  it('creates a draft: numbered lines in any UOM of the item, exact total, supplier currency, PO number', async () => {
    const supplier = await newSupplier(t, { currency: 'EUR' });
    const boxed = await newItem(t, f.uom('EA'), { uomConversions: [{ uomId: f.uom('BOX'), factor: 12 }] });
    const res = await create({
      supplierId: supplier.id,
      expectedDate: '2027-01-15',
      notes: 'first order',
      lines: [
        { itemId: f.item.id, qtyOrdered: 3, unitPrice: 0.1 },
        { itemId: boxed.id, qty: 2, uomId: f.uom('BOX'), unitPrice: 0.2 },
      ],
    });
    expect(res.headers.etag).toBe('"1"');
    expect(res.body.data).toEqual({
      id: expect.stringMatching(UUID),
      poNo: expect.stringMatching(/^PO-\d{6}$/),
      supplierId: supplier.id,
      facilityId: f.facility.id,
      status: 'draft',
      currency: 'EUR',
      orderDate: new Date().toISOString().slice(0, 10),
      expectedDate: '2027-01-15',
      notes: 'first order',
      lines: [
        { id: expect.stringMatching(UUID), lineNo: 1, itemId: f.item.id, qtyOrdered: 3, uomId: f.uom('EA'), unitPrice: 0.1, qtyReceived: 0 },
        { id: expect.stringMatching(UUID), lineNo: 2, itemId: boxed.id, qtyOrdered: 2, uomId: f.uom('BOX'), unitPrice: 0.2, qtyReceived: 0 },
      ],
      totalAmount: 0.7,
      requisitionId: null,
      ...auditFields(t.token),
    });
    const again = (await t.get(`${PO}/${res.body.data.id}`).expect(200)).body.data;
    expect(again).toEqual(res.body.data);
  });

  it('numbers orders sequentially per tenant, starting at PO-000001', async () => {
    const t2 = await newTenant(ctx);
    const f2 = await inventoryFixture(t2);
    const a = await purchaseOrderIn(t2, 'draft', { facilityId: f2.facility.id, itemId: f2.item.id });
    const b = await purchaseOrderIn(t2, 'draft', { facilityId: f2.facility.id, itemId: f2.item.id });
    expect([a.poNo, b.poNo]).toEqual(['PO-000001', 'PO-000002']);
  });

  it('refuses bad lines: unknown item 404 naming the field, a UOM not of the item 400, too many decimals 400, no quantity 400, unknown fields 400', async () => {
    const supplier = await newSupplier(t);
    const base = { supplierId: supplier.id };
    const unknown = (await create({ ...base, lines: [{ itemId: '00000000-0000-4000-8000-000000000000', qtyOrdered: 1, unitPrice: 1 }] }, 404)).body;
    expect(unknown).toMatchObject({ error: 'not_found', details: [{ field: 'lines[0].itemId' }] });
    const uom = (await create({ ...base, lines: [{ itemId: f.item.id, qtyOrdered: 1, uomId: f.uom('KG'), unitPrice: 1 }] }, 400)).body;
    expect(uom.details).toEqual([expect.objectContaining({ field: 'lines[0].uomId' })]);
    const decimals = (await create({ ...base, lines: [{ itemId: f.item.id, qtyOrdered: 1.5, unitPrice: 1 }] }, 400)).body;
    expect(decimals.details).toEqual([expect.objectContaining({ field: 'lines[0].qtyOrdered' })]);
    await create({ ...base, lines: [{ itemId: f.item.id, unitPrice: 1 }] }, 400);
    await create({ ...base, lines: [{ itemId: f.item.id, qtyOrdered: 1, unitPrice: -1 }] }, 400);
    await create({ ...base, lines: [{ itemId: f.item.id, qtyOrdered: 1, unitPrice: 1, discount: 3 }] }, 400);
    await create({ ...base, facilityId: other.locations[0].id }, 404);
    await create({ supplierId: f.item.id }, 404);
    expect((await t.get(`${PO}?supplierId=${supplier.id}`).expect(200)).body.count).toBe(0);
  });

  it('refuses inactive supplier, item and facility on new orders and new lines (409)', async () => {
    const inactiveSupplier = await newSupplier(t, { isActive: false });
    expect((await create({ supplierId: inactiveSupplier.id }, 409)).body).toMatchObject({ error: 'invalid_state', message: expect.stringContaining('inactive') });
    const supplier = await newSupplier(t);
    const item = await newItem(t, f.uom('EA'), { isActive: false });
    await create({ supplierId: supplier.id, lines: [{ itemId: item.id, qtyOrdered: 1, unitPrice: 1 }] }, 409);
    const facility = (await t.post('/v1/facilities', { code: `CLOSED-${Date.now()}`, name: 'Closed', isActive: false }).expect(201)).body.data;
    await create({ supplierId: supplier.id, facilityId: facility.id }, 409);
    const draft = await purchaseOrderIn(t, 'draft', { facilityId: f.facility.id, itemId: f.item.id, supplierId: supplier.id });
    await t.patch(`${PO}/${draft.id}`, { lines: [{ itemId: item.id, qtyOrdered: 1, unitPrice: 1 }] }).expect(409);
  });

  it('PATCH changes a draft only: lines replaced, total recomputed, version and If-Match', async () => {
    const order = await purchaseOrderIn(t, 'draft', { facilityId: f.facility.id, itemId: f.item.id });
    const res = await t.patch(`${PO}/${order.id}`, { lines: [{ itemId: f.item.id, qtyOrdered: 4, unitPrice: 1.25 }], notes: 'changed' }).set('If-Match', '"1"').expect(200);
    expect(res.body.data).toMatchObject({ version: 2, notes: 'changed', totalAmount: 5, lines: [{ lineNo: 1, qtyOrdered: 4, unitPrice: 1.25 }] });
    expect(res.headers.etag).toBe('"2"');
    await t.patch(`${PO}/${order.id}`, { notes: 'stale' }).set('If-Match', '"1"').expect(412);
    await action(order.id, 'submit');
    const refused = (await t.patch(`${PO}/${order.id}`, { notes: 'late' }).expect(409)).body;
    expect(refused).toMatchObject({ error: 'invalid_state', message: expect.stringContaining('is submitted') });
    expect((await t.get(`${PO}/${order.id}`).expect(200)).body.data.notes).toBe('changed');
  });

  it('walks draft → submitted → approved → sent; every action from a wrong state is 409 naming the state, and changes nothing', async () => {
    const empty = (await create({ supplierId: (await newSupplier(t)).id })).body.data;
    expect((await action(empty.id, 'submit', 409)).body.message).toMatch(/no lines/);

    const order = await purchaseOrderIn(t, 'draft', { facilityId: f.facility.id, itemId: f.item.id });
    for (const wrong of ['approve', 'send']) expect((await action(order.id, wrong, 409)).body.message).toMatch(/is draft/);
    await receive(order.id, [{ poLineId: order.lines[0].id, qty: 1, locationId: f.location.id }], 409);
    expect((await action(order.id, 'submit')).body.data).toMatchObject({ status: 'submitted', version: 2 });
    await action(order.id, 'submit', 409);
    await action(order.id, 'send', 409);
    await action(order.id, 'approve', 412, { 'If-Match': '"1"' });
    expect((await action(order.id, 'approve', 200, { 'If-Match': '"2"' })).body.data.status).toBe('approved');
    expect((await action(order.id, 'send')).body.data).toMatchObject({ status: 'sent', version: 4 });
    expect((await t.get(`${PO}/${order.id}`).expect(200)).body.data.status).toBe('sent');
  });

  it('cancels from draft, submitted, approved and sent, not once anything is received or after cancel', async () => {
    for (const state of ['draft', 'submitted', 'approved', 'sent'] as const) {
      const order = await purchaseOrderIn(t, state, { facilityId: f.facility.id, itemId: f.item.id });
      expect((await action(order.id, 'cancel')).body.data.status).toBe('cancelled');
      expect((await action(order.id, 'cancel', 409)).body.message).toMatch(/is cancelled/);
    }
    const order = await purchaseOrderIn(t, 'sent', { facilityId: f.facility.id, itemId: f.item.id });
    await receive(order.id, [{ poLineId: order.lines[0].id, qty: 1, locationId: f.location.id }]);
    expect((await action(order.id, 'cancel', 409)).body.message).toMatch(/is partially_received/);
  });

  it('receives partially then fully: one receipt transaction per receipt in base units, qtyReceived, statuses, receipts listed', async () => {
    const item = await newItem(t, f.uom('EA'), { uomConversions: [{ uomId: f.uom('BOX'), factor: 12 }] });
    const order = await purchaseOrderIn(t, 'approved', {
      facilityId: f.facility.id,
      lines: [{ itemId: item.id, qtyOrdered: 3, uomId: f.uom('BOX'), unitPrice: 10 }, { itemId: f.item.id, qtyOrdered: 5, unitPrice: 1 }],
    });
    const before = await onHand(t, { itemId: f.item.id, locationId: f.locations[1].id });
    const first = await receive(order.id, [
      { poLineId: order.lines[0].id, qty: 2, locationId: f.locations[1].id },
      { poLineId: order.lines[1].id, qty: 5, locationId: f.locations[1].id },
    ]);
    expect(first.body.data).toEqual({
      id: expect.stringMatching(UUID),
      receiptNo: expect.stringMatching(/^GR-\d{6}$/),
      purchaseOrderId: order.id,
      receivedAt: expect.stringMatching(ISO_MS),
      transactionId: expect.stringMatching(UUID),
      notes: null,
      lines: [
        { lineNo: 1, poLineId: order.lines[0].id, itemId: item.id, qty: 2, locationId: f.locations[1].id, lotNo: null, expiryDate: null, serialNos: [], statusId: f.status('AVAILABLE') },
        { lineNo: 2, poLineId: order.lines[1].id, itemId: f.item.id, qty: 5, locationId: f.locations[1].id, lotNo: null, expiryDate: null, serialNos: [], statusId: f.status('AVAILABLE') },
      ],
      createdBy: auditFields(t.token).createdBy,
      createdAt: expect.stringMatching(ISO_MS),
    });
    const txns = await transactionsOf(t, first.body.data.id);
    expect(txns.count).toBe(1);
    expect(txns.data[0]).toMatchObject({ id: first.body.data.transactionId, type: 'receipt', sourceType: 'receipt', sourceId: first.body.data.id });
    expect(txns.data[0].lines.map((l) => [l.lineNo, l.itemId, l.qtyDelta])).toEqual([[1, item.id, 24], [2, f.item.id, 5]]);
    expect(await onHand(t, { itemId: item.id, locationId: f.locations[1].id })).toBe(24);
    expect(await onHand(t, { itemId: f.item.id, locationId: f.locations[1].id })).toBe(before + 5);

    let po = (await t.get(`${PO}/${order.id}`).expect(200)).body.data;
    expect(po).toMatchObject({ status: 'partially_received', lines: [{ qtyReceived: 2 }, { qtyReceived: 5 }] });

    const second = await receive(order.id, [{ poLineId: order.lines[0].id, qty: 1, locationId: f.locations[1].id }]);
    po = (await t.get(`${PO}/${order.id}`).expect(200)).body.data;
    expect(po).toMatchObject({ status: 'received', lines: [{ qtyReceived: 3 }, { qtyReceived: 5 }] });
    expect(await onHand(t, { itemId: item.id, locationId: f.locations[1].id })).toBe(36);
    await receive(order.id, [{ poLineId: order.lines[1].id, qty: 1, locationId: f.locations[1].id }], 409);

    const list = (await t.get(`${PO}/${order.id}/receipts`).expect(200)).body;
    expect(list.count).toBe(2);
    expect(list.data.map((r: { id: string }) => r.id)).toEqual([second.body.data.id, first.body.data.id]);
    // Each receipt's answer is the receipt as its rows read back, field for field (numbers, times, quantities).
    expect(list.data).toEqual([second.body.data, first.body.data]);
    expect(Number(second.body.data.receiptNo.slice(3))).toBe(Number(first.body.data.receiptNo.slice(3)) + 1);
  });

  it('receives an approved line at its own UOM ratio after the item\'s conversion changes or goes (the order finishes as committed)', async () => {
    const BOX = f.uom('BOX');
    const gone = await newItem(t, f.uom('EA'), { uomConversions: [{ uomId: BOX, factor: 12 }] });
    const changed = await newItem(t, f.uom('EA'), { uomConversions: [{ uomId: BOX, factor: 12 }] });
    const order = await purchaseOrderIn(t, 'approved', {
      facilityId: f.facility.id,
      lines: [{ itemId: gone.id, qtyOrdered: 2, uomId: BOX, unitPrice: 1 }, { itemId: changed.id, qtyOrdered: 3, uomId: BOX, unitPrice: 1 }],
    });
    const [first, second] = order.lines.map((l) => l.id);
    const at = f.locations[1].id;
    const posted = async (receiptId: string) => (await transactionsOf(t, receiptId)).data[0].lines.map((l) => [l.itemId, l.qtyDelta]);
    await receive(order.id, [{ poLineId: first, qty: 1, locationId: at }, { poLineId: second, qty: 1, locationId: at }]);
    await t.patch(`/v1/items/${gone.id}`, { uomConversions: [] }).expect(200);
    await t.patch(`/v1/items/${changed.id}`, { uomConversions: [{ uomId: BOX, factor: 10 }] }).expect(200);
    // Still in the line's unit: a BOX takes whole numbers, as when the line was written.
    expect((await receive(order.id, [{ poLineId: first, qty: 0.5, locationId: at }], 400)).body.details).toEqual([expect.objectContaining({ field: 'lines[0].qty' })]);
    // 24 / 2 and 36 / 3 base units per BOX, as ordered: not 400 for the conversion gone, nor 10 at the new factor.
    const r2 = (await receive(order.id, [{ poLineId: first, qty: 1, locationId: at }, { poLineId: second, qty: 1, locationId: at }])).body.data;
    expect(await posted(r2.id)).toEqual([[gone.id, 12], [changed.id, 12]]);
    const r3 = (await receive(order.id, [{ poLineId: second, qty: 1, locationId: at }])).body.data;
    expect(await posted(r3.id)).toEqual([[changed.id, 12]]);
    expect(await onHand(t, { itemId: gone.id, locationId: at })).toBe(24);
    expect(await onHand(t, { itemId: changed.id, locationId: at })).toBe(36);
    expect((await t.get(`${PO}/${order.id}`).expect(200)).body.data).toMatchObject({ status: 'received', lines: [{ qtyReceived: 2 }, { qtyReceived: 3 }] });
  });

  it('over-receipt is 409 over_receipt naming the line, and nothing is posted', async () => {
    const order = await purchaseOrderIn(t, 'sent', { facilityId: f.facility.id, itemId: f.item.id });
    const before = await onHand(t, { itemId: f.item.id, locationId: f.location.id });
    const res = await receive(order.id, [
      { poLineId: order.lines[0].id, qty: 6, locationId: f.location.id },
      { poLineId: order.lines[0].id, qty: 5, locationId: f.location.id },
    ], 409);
    expect(res.body).toMatchObject({ error: 'over_receipt', details: [{ poLineId: order.lines[0].id, lineNo: 1, requested: 11, open: 10 }] });
    expect(await onHand(t, { itemId: f.item.id, locationId: f.location.id })).toBe(before);
    expect((await t.get(`${PO}/${order.id}/receipts`).expect(200)).body.count).toBe(0);
    expect((await t.get(`${PO}/${order.id}`).expect(200)).body.data).toMatchObject({ status: 'sent', lines: [{ qtyReceived: 0 }] });
  });

  it('refuses receipt lines that do not fit: a location of another facility 400, no location 400, another order\'s line 404, a bad status 404', async () => {
    const order = await purchaseOrderIn(t, 'approved', { facilityId: f.facility.id, itemId: f.item.id });
    const foreign = await purchaseOrderIn(t, 'approved', { facilityId: f.facility.id, itemId: f.item.id });
    const line = order.lines[0].id;
    expect((await receive(order.id, [{ poLineId: line, qty: 1, locationId: other.location.id }], 400)).body.details).toEqual([
      expect.objectContaining({ field: 'lines[0].locationId' }),
    ]);
    await receive(order.id, [{ poLineId: line, qty: 1 }], 400);
    expect((await receive(order.id, [{ poLineId: foreign.lines[0].id, qty: 1, locationId: f.location.id }], 404)).body.details).toEqual([
      expect.objectContaining({ field: 'lines[0].poLineId' }),
    ]);
    await receive(order.id, [{ poLineId: line, qty: 1, locationId: f.location.id, statusId: f.item.id }], 404);
    await receive(order.id, [], 400);
    // A line may echo its item (as the receipt answers it), but only that one.
    expect((await receive(order.id, [{ poLineId: line, itemId: foreign.id, qty: 1, locationId: f.location.id }], 400)).body.details).toEqual([
      expect.objectContaining({ field: 'lines[0].itemId' }),
    ]);
    expect((await t.get(`${PO}/${order.id}`).expect(200)).body.data.status).toBe('approved');
    const echoed = (await receive(order.id, [{ poLineId: line, itemId: f.item.id, qty: 1, locationId: f.location.id }], 201)).body.data;
    expect(echoed.lines).toEqual([expect.objectContaining({ poLineId: line, itemId: f.item.id, qty: 1 })]);
  });

  it('receives lot/expiry-tracked items into a lot, serial-tracked ones with their serials, and into QUARANTINE', async () => {
    const lotted = await newItem(t, f.uom('EA'), { lotTracking: 'required', expiryTracking: 'required' });
    const serial = await newItem(t, f.uom('EA'), { serialTracking: 'required' });
    const order = await purchaseOrderIn(t, 'sent', {
      facilityId: f.facility.id,
      lines: [{ itemId: lotted.id, qtyOrdered: 5, unitPrice: 1 }, { itemId: serial.id, qtyOrdered: 2, unitPrice: 100 }],
    });
    // the tracking rules of the ledger apply, naming the receipt line
    expect((await receive(order.id, [{ poLineId: order.lines[0].id, qty: 5, locationId: f.location.id }], 400)).body.details).toEqual([
      expect.objectContaining({ field: expect.stringMatching(/^lines\[0\]/) }),
    ]);
    await receive(order.id, [{ poLineId: order.lines[1].id, qty: 2, locationId: f.location.id, serialNos: ['S-1'] }], 400);
    const r = await receive(order.id, [
      { poLineId: order.lines[0].id, qty: 5, locationId: f.location.id, lotNo: 'L-77', expiryDate: '2027-06-30', statusId: f.status('QUARANTINE') },
      { poLineId: order.lines[1].id, qty: 2, locationId: f.location.id, serialNos: ['SN-A', 'SN-B'] },
    ]);
    expect(r.body.data.lines).toMatchObject([
      { lotNo: 'L-77', expiryDate: '2027-06-30', statusId: f.status('QUARANTINE') },
      { serialNos: ['SN-A', 'SN-B'], statusId: f.status('AVAILABLE') },
    ]);
    const lot = await lotId(t, lotted.id, 'L-77');
    expect(await onHand(t, { itemId: lotted.id, locationId: f.location.id, lotId: lot, statusCode: 'QUARANTINE' })).toBe(5);
    const serials = (await t.get(`/v1/inventory/serials?itemId=${serial.id}`).expect(200)).body.data;
    expect(serials.map((s: { serialNo: string; inStock: boolean }) => [s.serialNo, s.inStock]).sort()).toEqual([['SN-A', true], ['SN-B', true]]);
    expect((await t.get(`${PO}/${order.id}`).expect(200)).body.data.status).toBe('received');
    expect((await t.get(`${PO}/${order.id}/receipts`).expect(200)).body.data).toEqual([r.body.data]);
  });

  it('an approved order is still received after its item, location and supplier are deactivated', async () => {
    const item = await newItem(t, f.uom('EA'));
    const supplier = await newSupplier(t);
    const order = await purchaseOrderIn(t, 'approved', { facilityId: f.facility.id, itemId: item.id, supplierId: supplier.id });
    await t.patch(`/v1/items/${item.id}`, { isActive: false }).expect(200);
    await t.patch(`/v1/procurement/suppliers/${supplier.id}`, { isActive: false }).expect(200);
    const location = (await t.post(`/v1/facilities/${f.facility.id}/locations`, { code: `OLD-${Date.now()}`, name: 'Old bin' }).expect(201)).body.data;
    await t.patch(`/v1/facilities/${f.facility.id}/locations/${location.id}`, { isActive: false }).expect(200);
    await receive(order.id, [{ poLineId: order.lines[0].id, qty: 10, locationId: location.id }]);
    expect(await onHand(t, { itemId: item.id, locationId: location.id })).toBe(10);
  });

  it('non-stock and service lines are received without a location and post nothing', async () => {
    const service = await newItem(t, f.uom('EA'), { itemKind: 'service' });
    const order = await purchaseOrderIn(t, 'approved', { facilityId: f.facility.id, lines: [{ itemId: service.id, qtyOrdered: 1, unitPrice: 500 }] });
    await receive(order.id, [{ poLineId: order.lines[0].id, qty: 1, locationId: f.location.id }], 400);
    const r = await receive(order.id, [{ poLineId: order.lines[0].id, qty: 1 }]);
    expect(r.body.data.transactionId).toBeNull();
    expect((await transactionsOf(t, r.body.data.id)).count).toBe(0);
    expect((await t.get(`${PO}/${order.id}`).expect(200)).body.data.status).toBe('received');
    expect((await t.get(`${PO}/${order.id}/receipts`).expect(200)).body.data).toEqual([r.body.data]);
  });

  it('receipt lines of non-stock items take JSON null and an empty serialNos as absent', async () => {
    const service = await newItem(t, f.uom('EA'), { itemKind: 'service' });
    const order = await purchaseOrderIn(t, 'approved', { facilityId: f.facility.id, lines: [{ itemId: service.id, qtyOrdered: 2, unitPrice: 5 }] });
    const line = order.lines[0].id;
    await receive(order.id, [{ poLineId: line, qty: 1, locationId: null, statusId: null, lotNo: null, expiryDate: null, serialNos: null }]);
    const r = await receive(order.id, [{ poLineId: line, qty: 1, serialNos: [] }]);
    expect(r.body.data).toMatchObject({ transactionId: null, lines: [{ locationId: null, statusId: null, serialNos: [] }] });
    expect((await t.get(`${PO}/${order.id}`).expect(200)).body.data).toMatchObject({ status: 'received', lines: [{ qtyReceived: 2 }] });
  });

  it('two receipts in parallel that together exceed the order: one succeeds, one is over_receipt; the database agrees', async () => {
    const item = await newItem(t, f.uom('EA'));
    const order = await purchaseOrderIn(t, 'sent', { facilityId: f.facility.id, itemId: item.id });
    const results = await Promise.all(
      Array.from({ length: 6 }, () => t.post(`${PO}/${order.id}/receipts`, { lines: [{ poLineId: order.lines[0].id, qty: 4, locationId: f.location.id }] })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.error).toBe('over_receipt');
    const [line] = await ctx.db.query(`SELECT qty_received::float AS received, qty_ordered::float AS ordered FROM purchase_order_lines WHERE id = $1`, [order.lines[0].id]);
    expect(line).toEqual({ received: 8, ordered: 10 });
    const [ledger] = await ctx.db.query(`SELECT sum(qty_delta)::float AS qty FROM ledger_lines WHERE tenant_id = $1 AND item_id = $2`, [t.tenantId, item.id]);
    expect(ledger.qty).toBe(8);
    expect(await onHand(t, { itemId: item.id, locationId: f.location.id })).toBe(8);
  });

  it('lists with filters status, supplierId, facilityId and q on the order number and the supplier name, newest first', async () => {
    const t2 = await newTenant(ctx);
    const f2 = await inventoryFixture(t2);
    const fac2 = await facilityWithLocations(t2, 1);
    const acme = await newSupplier(t2, { name: 'Acme Industrial' });
    const bolt = await newSupplier(t2, { name: 'Bolt & Nut Co' });
    const a = await purchaseOrderIn(t2, 'draft', { facilityId: f2.facility.id, itemId: f2.item.id, supplierId: acme.id });
    const b = await purchaseOrderIn(t2, 'submitted', { facilityId: fac2.facility.id, itemId: f2.item.id, supplierId: bolt.id });
    const c = await purchaseOrderIn(t2, 'approved', { facilityId: f2.facility.id, itemId: f2.item.id, supplierId: bolt.id });
    const ids = async (query: string) => {
      const body = (await t2.get(`${PO}${query}`).expect(200)).body;
      expect(body.count).toBe(body.data.length);
      return body.data.map((o: { id: string }) => o.id);
    };
    expect(await ids('')).toEqual([c.id, b.id, a.id]);
    expect(await ids('?status=submitted')).toEqual([b.id]);
    expect(await ids(`?supplierId=${bolt.id}`)).toEqual([c.id, b.id]);
    expect(await ids(`?facilityId=${fac2.facility.id}`)).toEqual([b.id]);
    expect(await ids('?q=industrial')).toEqual([a.id]);
    expect(await ids(`?q=${b.poNo.toLowerCase()}`)).toEqual([b.id]);
    expect(await ids('?q=nut%20co&status=approved')).toEqual([c.id]);
    expect(await ids('?q=%25')).toEqual([]);
    const paged = (await t2.get(`${PO}?limit=1&offset=1`).expect(200)).body;
    expect(paged).toMatchObject({ count: 3, limit: 1, offset: 1, data: [{ id: b.id }] });
    await t2.get(`${PO}?status=open`).expect(400);
    await t2.get(`${PO}?limit=0`).expect(400);
  });

  it('isolates tenants: another tenant\'s orders and suppliers are 404 on every route and unusable as references', async () => {
    const order = await purchaseOrderIn(t, 'approved', { facilityId: f.facility.id, itemId: f.item.id });
    const supplier = await newSupplier(t);
    const t2 = await newTenant(ctx);
    const f2 = await inventoryFixture(t2);
    await t2.get(`${PO}/${order.id}`).expect(404);
    await t2.patch(`${PO}/${order.id}`, { notes: 'x' }).expect(404);
    for (const a of ['submit', 'approve', 'send', 'cancel']) await t2.post(`${PO}/${order.id}/${a}`).expect(404);
    await t2.get(`${PO}/${order.id}/receipts`).expect(404);
    await t2.post(`${PO}/${order.id}/receipts`, { lines: [{ poLineId: order.lines[0].id, qty: 1, locationId: f2.location.id }] }).expect(404);
    await t2.get(`/v1/procurement/suppliers/${supplier.id}`).expect(404);
    const ref = (await t2.post(PO, { supplierId: supplier.id, facilityId: f2.facility.id }).expect(404)).body;
    expect(ref.details).toEqual([expect.objectContaining({ field: 'supplierId' })]);
    expect((await t2.get(PO).expect(200)).body.count).toBe(0);
    await t2.get(`${PO}/not-a-uuid`).expect(404);
  });

  it('permissions: read for GET, write for changes, approve only with procurement:approve', async () => {
    const order = await purchaseOrderIn(t, 'submitted', { facilityId: f.facility.id, itemId: f.item.id });
    const as = async (permissions: string[]) => {
      const token = await ctx.idp.token({ tenantId: t.tenantId, permissions });
      return (method: 'get' | 'post' | 'patch', url: string, body?: object) => ctx.http[method](url).set('Authorization', `Bearer ${token}`).send(body);
    };
    const writer = await as(['procurement:read', 'procurement:write']);
    expect((await writer('post', `${PO}/${order.id}/approve`)).status).toBe(403);
    const reader = await as(['procurement:read']);
    expect((await reader('get', `${PO}/${order.id}`)).status).toBe(200);
    expect((await reader('post', PO, {})).status).toBe(403);
    expect((await reader('patch', `${PO}/${order.id}`, {})).status).toBe(403);
    expect((await reader('post', `${PO}/${order.id}/receipts`, { lines: [] })).status).toBe(403);
    const none = await as(['inventory:read']);
    expect((await none('get', PO)).status).toBe(403);
    expect((await none('get', '/v1/procurement/suppliers')).status).toBe(403);
    const approver = await as(['procurement:approve']);
    expect((await approver('post', `${PO}/${order.id}/approve`)).status).toBe(200);
  });

  it('reorder suggestions count the open purchase-order quantity in base units (submitted, approved, sent, partially received)', async () => {
    const item = await newItem(t, f.uom('EA'), { uomConversions: [{ uomId: f.uom('BOX'), factor: 12 }] });
    await adjust(t, { itemId: item.id, locationId: f.location.id, qtyDelta: 5 });
    await t.post('/v1/inventory/policies', { itemId: item.id, facilityId: f.facility.id, minQty: 100, maxQty: 200 }).expect(201);
    const projected = async () => {
      const rows = (await t.get(`/v1/inventory/policies/suggestions?itemId=${item.id}`).expect(200)).body.data;
      return rows.length ? rows[0].projectedQty : null;
    };
    expect(await projected()).toBe(5);
    const line = [{ itemId: item.id, qtyOrdered: 3, uomId: f.uom('BOX'), unitPrice: 1 }];
    await purchaseOrderIn(t, 'draft', { facilityId: f.facility.id, lines: line }); // drafts do not count
    await purchaseOrderIn(t, 'draft', { facilityId: other.facility.id, lines: line });
    expect(await projected()).toBe(5);
    const sent = await purchaseOrderIn(t, 'sent', { facilityId: f.facility.id, lines: line });
    expect(await projected()).toBe(41);
    await receive(sent.id, [{ poLineId: sent.lines[0].id, qty: 1, locationId: f.location.id }]);
    expect(await projected()).toBe(41); // 12 more on hand, 12 less on order
    const approved = await purchaseOrderIn(t, 'approved', { facilityId: f.facility.id, lines: line });
    expect(await projected()).toBe(77);
    await action(approved.id, 'cancel');
    expect(await projected()).toBe(41);
  });
});
