import { randomUUID } from 'node:crypto';
import { ALL, newTenant, startApp, Tenant, TestContext } from '../support/app';
import { adjust, facilityWithLocations, inventoryFixture, newItem } from '../support/fixtures';
import { ISO_MS, subOf } from '../support/matchers';

type Fixture = Awaited<ReturnType<typeof inventoryFixture>>;

describe('Reorder policies', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  const createPolicy = (t: Tenant, body: Record<string, unknown>, status = 201) => t.post('/v1/inventory/policies', body).expect(status);

  it('creates, reads, lists and changes policies', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const other = await facilityWithLocations(t, 0);
    const res = await createPolicy(t, { itemId: f.item.id, facilityId: f.facility.id, minQty: 10, maxQty: 50 });
    const p = res.body.data;
    expect(p).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      itemId: f.item.id,
      facilityId: f.facility.id,
      minQty: 10,
      maxQty: 50,
      safetyStock: 0,
      reorderQty: 0,
      leadTimeDays: 0,
      isActive: true,
      version: 1,
      createdBy: subOf(t.token),
      updatedBy: subOf(t.token),
      createdAt: expect.stringMatching(ISO_MS),
      updatedAt: expect.stringMatching(ISO_MS),
    });
    expect(res.headers.etag).toBe('"1"');
    expect((await t.get(`/v1/inventory/policies/${p.id}`).expect(200)).body.data).toEqual(p);

    const full = (
      await createPolicy(t, { itemId: f.item.id, facilityId: other.facility.id, minQty: 0, maxQty: 0, safetyStock: 2, reorderQty: 6, leadTimeDays: 14, isActive: false })
    ).body.data;
    expect(full).toMatchObject({ minQty: 0, maxQty: 0, safetyStock: 2, reorderQty: 6, leadTimeDays: 14, isActive: false });

    const list = (await t.get('/v1/inventory/policies').expect(200)).body;
    expect(list).toMatchObject({ count: 2, limit: 50, offset: 0 });
    expect(list.data.map((x: { id: string }) => x.id)).toEqual([full.id, p.id]);
    expect((await t.get(`/v1/inventory/policies?facilityId=${f.facility.id}`).expect(200)).body.data.map((x: { id: string }) => x.id)).toEqual([p.id]);
    expect((await t.get(`/v1/inventory/policies?itemId=${f.item.id}&limit=1&offset=1`).expect(200)).body).toMatchObject({ count: 2, data: [{ id: p.id }] });
    expect((await t.get(`/v1/inventory/policies?q=${f.item.itemNo.toLowerCase()}`).expect(200)).body.count).toBe(2);
    expect((await t.get('/v1/inventory/policies?q=no-such-item').expect(200)).body.count).toBe(0);

    // Changed by another user: updatedBy is the token's sub, createdBy stays.
    const editor = `Bearer ${await ctx.idp.token({ tenantId: t.tenantId, permissions: ALL, sub: 'editor-1' })}`;
    const changed = await ctx.http
      .patch(`/v1/inventory/policies/${p.id}`)
      .set({ Authorization: editor, 'If-Match': '"1"' })
      .send({ maxQty: 60, leadTimeDays: 3, reorderQty: 12 })
      .expect(200);
    expect(changed.body.data).toEqual({
      ...p, maxQty: 60, leadTimeDays: 3, reorderQty: 12, version: 2, updatedBy: 'editor-1', updatedAt: expect.stringMatching(ISO_MS),
    });
    expect(changed.headers.etag).toBe('"2"');
    expect((await t.patch(`/v1/inventory/policies/${p.id}`).set('If-Match', '"1"').send({ minQty: 1 }).expect(412)).body.error).toBe('version_conflict');
    // minQty <= maxQty against the merged values
    expect((await t.patch(`/v1/inventory/policies/${p.id}`, { minQty: 61 }).expect(400)).body).toMatchObject({
      error: 'validation_failed',
      details: [{ field: 'minQty' }],
    });
    expect((await t.patch(`/v1/inventory/policies/${p.id}`, { maxQty: 9 }).expect(400)).body.error).toBe('validation_failed');
    expect((await t.patch(`/v1/inventory/policies/${p.id}`, { minQty: 60 }).expect(200)).body.data).toMatchObject({ minQty: 60, maxQty: 60, version: 3 });
    // item and facility are fixed
    expect((await t.patch(`/v1/inventory/policies/${p.id}`, { itemId: f.item.id }).expect(400)).body.details).toEqual([
      { field: 'itemId', message: 'is not an allowed field' },
    ]);
    // null in an optional field is the field left out (CONTRACT §1)
    expect((await t.patch(`/v1/inventory/policies/${p.id}`, { minQty: null }).expect(200)).body.data).toMatchObject({ minQty: 60, version: 3 });
    // an empty PATCH changes nothing
    expect((await t.patch(`/v1/inventory/policies/${p.id}`, {}).expect(200)).body.data.version).toBe(3);

    await t.get(`/v1/inventory/policies/${randomUUID()}`).expect(404);
    await t.get('/v1/inventory/policies/xyz').expect(404);
    await t.patch(`/v1/inventory/policies/${randomUUID()}`, { minQty: 1 }).expect(404);
    const stranger = await newTenant(ctx);
    await stranger.get(`/v1/inventory/policies/${p.id}`).expect(404);
    expect((await stranger.get('/v1/inventory/policies').expect(200)).body.count).toBe(0);
    const reader = await newTenant(ctx, ['inventory:read']);
    await reader.post('/v1/inventory/policies', {}).expect(403);
  });

  it('refuses duplicates, minQty > maxQty, unknown references and unfit quantities', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const base = { itemId: f.item.id, facilityId: f.facility.id, minQty: 1, maxQty: 5 };
    await createPolicy(t, base);
    expect((await createPolicy(t, { ...base, minQty: 2 }, 409)).body.error).toBe('duplicate');

    const item = await newItem(t, f.uom('EA'));
    expect((await createPolicy(t, { ...base, itemId: item.id, minQty: 6 }, 400)).body).toMatchObject({
      error: 'validation_failed',
      details: [{ field: 'minQty' }],
    });
    expect((await createPolicy(t, { ...base, itemId: randomUUID() }, 404)).body.details).toEqual([{ field: 'itemId', message: 'not found' }]);
    expect((await createPolicy(t, { ...base, itemId: item.id, facilityId: randomUUID() }, 404)).body.details).toEqual([
      { field: 'facilityId', message: 'not found' },
    ]);
    const service = await newItem(t, f.uom('EA'), { itemKind: 'service' });
    expect((await createPolicy(t, { ...base, itemId: service.id }, 400)).body.details[0].field).toBe('itemId');
    // EA takes whole numbers
    expect((await createPolicy(t, { ...base, itemId: item.id, reorderQty: 2.5 }, 400)).body.details).toEqual([
      { field: 'reorderQty', message: expect.stringContaining('at most 0 decimals') },
    ]);
    expect((await createPolicy(t, { ...base, itemId: item.id, minQty: -1 }, 400)).body.details[0].field).toBe('minQty');
    expect((await createPolicy(t, { ...base, itemId: item.id, leadTimeDays: 1.5 }, 400)).body.details[0].field).toBe('leadTimeDays');
    await createPolicy(t, { itemId: item.id, facilityId: f.facility.id, maxQty: 5 }, 400);
  });

  describe('suggestions', () => {
    let t: Tenant;
    let f: Fixture;
    const suggestions = async (query = '') => (await t.get(`/v1/inventory/policies/suggestions${query}`).expect(200)).body;
    const stock = async (baseUom = 'EA', qty?: number) => {
      const item = await newItem(t, f.uom(baseUom));
      if (qty) await adjust(t, { itemId: item.id, locationId: f.location.id, qtyDelta: qty });
      return item;
    };
    const policy = async (itemId: string, body: Record<string, unknown>, facilityId = f.facility.id) =>
      (await createPolicy(t, { itemId, facilityId, ...body })).body.data;

    beforeAll(async () => {
      t = await newTenant(ctx);
      f = await inventoryFixture(t);
    });

    it('suggests maxQty − projectedQty for active policies below minQty + safetyStock, rounded up to the reorder multiple', async () => {
      // projected 30 < min 40 → 100 − 30 = 70
      const plain = await stock('EA', 30);
      await policy(plain.id, { minQty: 40, maxQty: 100 });
      // projected 30 < min 20 + safety 15 = 35 → 100 − 30 = 70 → multiple of 25 → 75
      const multiple = await stock('EA', 30);
      await policy(multiple.id, { minQty: 20, maxQty: 100, safetyStock: 15, reorderQty: 25 });
      // projected 30 − 10 open reserved − 5 allocated = 15 < 20 → 50 − 15 = 35 (30 alone would not be below 20)
      const held = await stock('EA', 30);
      await t.post('/v1/inventory/reservations', { itemId: held.id, facilityId: f.facility.id, qty: 10 }).expect(201);
      const pinned = (await t.post('/v1/inventory/reservations', { itemId: held.id, facilityId: f.facility.id, qty: 5 }).expect(201)).body.data;
      await t.post(`/v1/inventory/reservations/${pinned.id}/allocate`).expect(200);
      await policy(held.id, { minQty: 20, maxQty: 50 });
      // never stocked: projected 0 < 5 → 12 → multiple of 5 → 15
      const none = await stock('EA');
      await policy(none.id, { minQty: 5, maxQty: 12, reorderQty: 5 });
      // at or above min + safety: no suggestion (50 >= 10; 30 >= 30)
      await policy((await stock('EA', 50)).id, { minQty: 10, maxQty: 60 });
      await policy((await stock('EA', 30)).id, { minQty: 25, maxQty: 60, safetyStock: 5 });
      // inactive: none
      const inactive = await stock('EA');
      const off = await policy(inactive.id, { minQty: 5, maxQty: 10, isActive: false });
      // QUARANTINE stock is not available: projected 30 < 40 → 70
      const quarantined = await stock('EA', 30);
      await adjust(t, { itemId: quarantined.id, locationId: f.location.id, qtyDelta: 100, statusId: f.status('QUARANTINE') });
      await policy(quarantined.id, { minQty: 40, maxQty: 100 });
      // exact decimals: 0.1 + 0.2 = 0.3 KG < 1 → 1.5 − 0.3 = 1.2 → multiple of 0.5 → 1.5
      const kg = await stock('KG', 0.1);
      await adjust(t, { itemId: kg.id, locationId: f.location.id, qtyDelta: 0.2 });
      await policy(kg.id, { minQty: 1, maxQty: 1.5, reorderQty: 0.5 });
      // another facility, where the item has no stock: 0 < 1 → 2
      const elsewhere = await facilityWithLocations(t, 0);
      await policy(plain.id, { minQty: 1, maxQty: 2 }, elsewhere.facility.id);

      const res = await suggestions();
      const F = f.facility.id;
      // newest policy first
      expect(res.data).toEqual([
        { itemId: plain.id, facilityId: elsewhere.facility.id, projectedQty: 0, suggestedQty: 2 },
        { itemId: kg.id, facilityId: F, projectedQty: 0.3, suggestedQty: 1.5 },
        { itemId: quarantined.id, facilityId: F, projectedQty: 30, suggestedQty: 70 },
        { itemId: none.id, facilityId: F, projectedQty: 0, suggestedQty: 15 },
        { itemId: held.id, facilityId: F, projectedQty: 15, suggestedQty: 35 },
        { itemId: multiple.id, facilityId: F, projectedQty: 30, suggestedQty: 75 },
        { itemId: plain.id, facilityId: F, projectedQty: 30, suggestedQty: 70 },
      ]);
      expect(res).toMatchObject({ count: 7, limit: 50, offset: 0 });

      expect((await suggestions(`?facilityId=${elsewhere.facility.id}`)).data).toEqual([
        { itemId: plain.id, facilityId: elsewhere.facility.id, projectedQty: 0, suggestedQty: 2 },
      ]);
      expect((await suggestions(`?itemId=${plain.id}`)).count).toBe(2);
      expect((await suggestions('?limit=2&offset=5')).data.map((s: { itemId: string }) => s.itemId)).toEqual([multiple.id, plain.id]);

      // switching a policy on and off adds and removes its suggestion
      await t.patch(`/v1/inventory/policies/${off.id}`, { isActive: true }).expect(200);
      expect((await suggestions(`?itemId=${inactive.id}`)).data).toEqual([{ itemId: inactive.id, facilityId: F, projectedQty: 0, suggestedQty: 10 }]);
      await t.patch(`/v1/inventory/policies/${off.id}`, { isActive: false }).expect(200);
      expect((await suggestions(`?itemId=${inactive.id}`)).count).toBe(0);

      // stock arriving removes a suggestion: 30 + 15 = 45 >= 40
      await adjust(t, { itemId: plain.id, locationId: f.location.id, qtyDelta: 15 });
      expect((await suggestions(`?itemId=${plain.id}&facilityId=${F}`)).count).toBe(0);
    });
  });
});
