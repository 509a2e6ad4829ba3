import { newTenant, startApp, Tenant, TestContext } from '../support/app';
import { InventoryFixture, inventoryFixture, newItem, newSupplier } from '../support/fixtures';
import { auditFields, UUID } from '../support/matchers';

describe('Suppliers', () => {
  let ctx: TestContext;
  let t: Tenant;

  beforeAll(async () => {
    ctx = await startApp();
    t = await newTenant(ctx);
  });
  afterAll(() => ctx.close());

  const S = '/v1/procurement/suppliers';

  it('creates, reads, lists and changes a supplier; code unique per tenant', async () => {
    const res = await t.post(S, { code: 'ACME', name: 'Acme Industrial', email: 'buy@acme.example', phone: '+1 555 0100', address: '1 Main St', currency: 'EUR' }).expect(201);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(UUID), code: 'ACME', name: 'Acme Industrial', email: 'buy@acme.example', phone: '+1 555 0100',
      address: '1 Main St', currency: 'EUR', isActive: true, ...auditFields(t.token),
    });
    expect(res.headers.etag).toBe('"1"');
    const id = res.body.data.id;
    expect((await t.get(`${S}/${id}`).expect(200)).body.data).toEqual(res.body.data);
    expect((await t.post(S, { code: 'ACME', name: 'Other' }).expect(409)).body).toMatchObject({ error: 'duplicate', message: expect.stringContaining('ACME') });
    const plain = (await t.post(S, { code: 'BOLT', name: 'Bolt & Nut' }).expect(201)).body.data;
    expect(plain).toMatchObject({ currency: 'USD', email: null, isActive: true });

    const changed = await t.patch(`${S}/${id}`, { name: 'Acme Ltd', isActive: false }).set('If-Match', '"1"').expect(200);
    expect(changed.body.data).toMatchObject({ name: 'Acme Ltd', isActive: false, version: 2, code: 'ACME' });
    await t.patch(`${S}/${id}`, { name: 'stale' }).set('If-Match', '"1"').expect(412);
    await t.patch(`${S}/${id}`, { code: 'BOLT' }).expect(409);
    await t.patch(`${S}/${id}`, { currency: 'euro' }).expect(400);
    expect((await t.patch(`${S}/${id}`, { code: null }).expect(200)).body.data.code).not.toBeNull(); // null: left out (CONTRACT §1)

    const list = async (q: string) => (await t.get(`${S}${q}`).expect(200)).body;
    expect((await list('')).data.map((s: { code: string }) => s.code)).toEqual(['BOLT', 'ACME']);
    expect((await list('?isActive=false')).data.map((s: { code: string }) => s.code)).toEqual(['ACME']);
    expect((await list('?q=nut')).data.map((s: { code: string }) => s.code)).toEqual(['BOLT']);
    expect((await list('?q=acm')).data.map((s: { code: string }) => s.code)).toEqual(['ACME']);
    expect((await list('?q=acm&isActive=true')).count).toBe(0);
  });

  it('refuses bad input with 400 and unknown ids with 404; another tenant\'s supplier does not exist', async () => {
    await t.post(S, { name: 'No code' }).expect(400);
    await t.post(S, { code: 'X', name: 'X', email: 'not-an-email' }).expect(400);
    await t.post(S, { code: 'X', name: 'X', rating: 5 }).expect(400);
    await t.get(`${S}/00000000-0000-4000-8000-000000000000`).expect(404);
    const mine = await newSupplier(t);
    const t2 = await newTenant(ctx);
    await t2.get(`${S}/${mine.id}`).expect(404);
    await t2.patch(`${S}/${mine.id}`, { name: 'x' }).expect(404);
    expect((await t2.get(S).expect(200)).body.count).toBe(0);
    await t2.post(S, { code: mine.code, name: 'same code, other tenant' }).expect(201);
  });
});

describe('Requisitions', () => {
  let ctx: TestContext;
  let t: Tenant;
  let f: InventoryFixture;

  beforeAll(async () => {
    ctx = await startApp();
    t = await newTenant(ctx);
    f = await inventoryFixture(t);
  });
  afterAll(() => ctx.close());

  const R = '/v1/procurement/requisitions';
  const act = (id: string, name: string, status = 200) => t.post(`${R}/${id}/${name}`).expect(status);

  it('creates a draft, changes it, submits, approves and converts it into one draft purchase order per supplier', async () => {
    const acme = await newSupplier(t, { currency: 'EUR' });
    const bolt = await newSupplier(t);
    const boxed = await newItem(t, f.uom('EA'), { uomConversions: [{ uomId: f.uom('BOX'), factor: 12 }] });
    const res = await t.post(R, { facilityId: f.facility.id, neededBy: '2027-03-01', lines: [{ itemId: f.item.id, qty: 1 }] }).expect(201);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(UUID), reqNo: expect.stringMatching(/^RQ-\d{6}$/), facilityId: f.facility.id, status: 'draft',
      neededBy: '2027-03-01', notes: null,
      lines: [{ id: expect.stringMatching(UUID), lineNo: 1, itemId: f.item.id, qty: 1, uomId: f.uom('EA'), supplierId: null }],
      purchaseOrderIds: [], ...auditFields(t.token),
    });
    const id = res.body.data.id;
    const lines = [
      { itemId: f.item.id, qty: 5, supplierId: acme.id },
      { itemId: boxed.id, qty: 2, uomId: f.uom('BOX'), supplierId: bolt.id },
      { itemId: boxed.id, qty: 7, supplierId: acme.id },
    ];
    expect((await t.patch(`${R}/${id}`, { lines }).set('If-Match', '"1"').expect(200)).body.data).toMatchObject({ version: 2, lines: [{ lineNo: 1 }, { lineNo: 2 }, { lineNo: 3 }] });
    await act(id, 'approve', 409);
    await act(id, 'convert', 409);
    expect((await act(id, 'submit')).body.data.status).toBe('submitted');
    await t.patch(`${R}/${id}`, { notes: 'late' }).expect(409);
    expect((await act(id, 'approve')).body.data.status).toBe('approved');
    const converted = (await act(id, 'convert')).body.data;
    expect(converted).toMatchObject({ status: 'ordered', purchaseOrderIds: [expect.stringMatching(UUID), expect.stringMatching(UUID)] });

    const [first, second] = await Promise.all(converted.purchaseOrderIds.map(async (po: string) => (await t.get(`/v1/procurement/purchase-orders/${po}`).expect(200)).body.data));
    expect(first).toMatchObject({
      supplierId: acme.id, facilityId: f.facility.id, status: 'draft', currency: 'EUR', expectedDate: '2027-03-01', requisitionId: id, totalAmount: 0,
      lines: [{ lineNo: 1, itemId: f.item.id, qtyOrdered: 5, uomId: f.uom('EA'), unitPrice: 0 }, { lineNo: 2, itemId: boxed.id, qtyOrdered: 7, uomId: f.uom('EA') }],
    });
    expect(second).toMatchObject({ supplierId: bolt.id, currency: 'USD', lines: [{ itemId: boxed.id, qtyOrdered: 2, uomId: f.uom('BOX') }] });
    expect((await act(id, 'convert', 409)).body.message).toMatch(/is ordered/);
  });

  it('a line without a supplier → 400 on convert and nothing is created', async () => {
    const acme = await newSupplier(t);
    const req = (await t.post(R, { facilityId: f.facility.id, lines: [{ itemId: f.item.id, qty: 1, supplierId: acme.id }, { itemId: f.item.id, qty: 2 }] }).expect(201)).body.data;
    await act(req.id, 'submit');
    await act(req.id, 'approve');
    const before = (await t.get('/v1/procurement/purchase-orders').expect(200)).body.count;
    expect((await act(req.id, 'convert', 400)).body).toMatchObject({ error: 'validation_failed', details: [{ field: 'lines[1].supplierId' }] });
    expect((await t.get('/v1/procurement/purchase-orders').expect(200)).body.count).toBe(before);
    expect((await t.get(`${R}/${req.id}`).expect(200)).body.data).toMatchObject({ status: 'approved', purchaseOrderIds: [] });
  });

  it('refuses a submit without lines, inactive references, and lists with filters', async () => {
    const empty = (await t.post(R, { facilityId: f.facility.id }).expect(201)).body.data;
    expect((await act(empty.id, 'submit', 409)).body.message).toMatch(/no lines/);
    const inactive = await newSupplier(t, { isActive: false });
    await t.post(R, { facilityId: f.facility.id, lines: [{ itemId: f.item.id, qty: 1, supplierId: inactive.id }] }).expect(409);
    await t.post(R, { facilityId: f.facility.id, lines: [{ itemId: f.item.id, qty: 0.5 }] }).expect(400);
    await t.post(R, { facilityId: f.item.id }).expect(404);

    const t2 = await newTenant(ctx);
    const f2 = await inventoryFixture(t2);
    const a = (await t2.post(R, { facilityId: f2.facility.id, lines: [{ itemId: f2.item.id, qty: 1 }] }).expect(201)).body.data;
    const b = (await t2.post(R, { facilityId: f2.facility.id }).expect(201)).body.data;
    await t2.post(`${R}/${a.id}/submit`).expect(200);
    expect((await t2.get(R).expect(200)).body.data.map((r: { id: string }) => r.id)).toEqual([b.id, a.id]);
    expect((await t2.get(`${R}?status=submitted`).expect(200)).body.data.map((r: { id: string }) => r.id)).toEqual([a.id]);
    expect((await t2.get(`${R}?q=${a.reqNo}`).expect(200)).body.count).toBe(1);
    await t.get(`${R}/${a.id}`).expect(404);
    await t.post(`${R}/${a.id}/approve`).expect(404);
  });

  it('approve needs procurement:approve; writes need procurement:write', async () => {
    const req = (await t.post(R, { facilityId: f.facility.id, lines: [{ itemId: f.item.id, qty: 1 }] }).expect(201)).body.data;
    await act(req.id, 'submit');
    const token = async (permissions: string[]) => `Bearer ${await ctx.idp.token({ tenantId: t.tenantId, permissions })}`;
    const writer = await token(['procurement:read', 'procurement:write']);
    await ctx.http.post(`${R}/${req.id}/approve`).set('Authorization', writer).expect(403);
    const reader = await token(['procurement:read']);
    await ctx.http.post(R).set('Authorization', reader).send({ facilityId: f.facility.id }).expect(403);
    await ctx.http.get(R).set('Authorization', reader).expect(200);
    await ctx.http.post(`${R}/${req.id}/approve`).set('Authorization', await token(['procurement:approve'])).expect(200);
  });
});
