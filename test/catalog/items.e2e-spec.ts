import { randomUUID } from 'node:crypto';
import { ALL, newTenant, startApp, Tenant, TestContext } from '../support/app';
import { ISO_MS, subOf } from '../support/matchers';


/** The `sub` of a tenant's token (recorded as createdBy/updatedBy). */

async function uomIds(t: Tenant): Promise<Record<string, string>> {
  const res = await t.get('/v1/uoms?limit=500').expect(200);
  return Object.fromEntries(res.body.data.map((u: { code: string; id: string }) => [u.code, u.id]));
}

describe('Items', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  describe('create and read', () => {
    it('creates an item with every field and reads back the same record by id and in the list', async () => {
      const t = await newTenant(ctx);
      const uom = await uomIds(t);
      const created = await t
        .post('/v1/items', {
          itemNo: 'WID-001',
          name: 'Widget',
          description: 'A blue widget',
          itemKind: 'non_stock',
          baseUomId: uom.EA,
          lotTracking: 'required',
          serialTracking: 'required',
          expiryTracking: 'required',
          isActive: false,
          identifiers: [
            { type: 'sku', value: 'W-1' },
            { type: 'gtin', value: '04006381333931' },
            { type: 'ean', value: '4006381333931' },
          ],
          attributes: [
            { name: 'size', value: 'L' },
            { name: 'color', value: 'blue' },
          ],
          uomConversions: [
            { uomId: uom.BOX, factor: 12 },
            { uomId: uom.KG, factor: 0.000001 },
          ],
        })
        .expect(201);
      const item = created.body.data;
      expect(item).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        itemNo: 'WID-001',
        name: 'Widget',
        description: 'A blue widget',
        itemKind: 'non_stock',
        baseUomId: uom.EA,
        lotTracking: 'required',
        serialTracking: 'required',
        expiryTracking: 'required',
        isActive: false,
        // children come back in a documented order: identifiers by type, value; attributes by name; conversions by factor
        identifiers: [
          { type: 'ean', value: '4006381333931' },
          { type: 'gtin', value: '04006381333931' },
          { type: 'sku', value: 'W-1' },
        ],
        attributes: [
          { name: 'color', value: 'blue' },
          { name: 'size', value: 'L' },
        ],
        uomConversions: [
          { uomId: uom.KG, factor: 0.000001 },
          { uomId: uom.BOX, factor: 12 },
        ],
        version: 1,
        createdBy: subOf(t.token),
        updatedBy: subOf(t.token),
        createdAt: expect.stringMatching(ISO_MS),
        updatedAt: expect.stringMatching(ISO_MS),
      });
      expect(created.headers.etag).toBe('"1"');

      const got = await t.get(`/v1/items/${item.id}`).expect(200);
      expect(got.body).toEqual({ data: item });
      expect(got.headers.etag).toBe('"1"');

      const list = await t.get('/v1/items').expect(200);
      expect(list.body).toEqual({ data: [item], count: 1, limit: 50, offset: 0, nextCursor: null });

      const [row] = await ctx.db.query(`SELECT created_by, updated_by FROM items WHERE id = $1`, [item.id]);
      expect(row).toEqual({ created_by: subOf(t.token), updated_by: subOf(t.token) });
    });

    it('applies the defaults to a minimal item', async () => {
      const t = await newTenant(ctx);
      const uom = await uomIds(t);
      const res = await t.post('/v1/items', { itemNo: 'MIN', name: 'Minimal', baseUomId: uom.KG }).expect(201);
      expect(res.body.data).toMatchObject({
        itemNo: 'MIN',
        description: null,
        itemKind: 'stock',
        baseUomId: uom.KG,
        lotTracking: 'none',
        serialTracking: 'none',
        expiryTracking: 'none',
        isActive: true,
        identifiers: [],
        attributes: [],
        uomConversions: [],
        version: 1,
      });
      expect(res.body.data.updatedAt).toBe(res.body.data.createdAt);
    });

    it('returns 404 for an unknown or malformed id', async () => {
      const t = await newTenant(ctx);
      const unknown = await t.get(`/v1/items/${randomUUID()}`).expect(404);
      expect(unknown.body).toEqual({ error: 'not_found', message: 'Item not found', status: 404 });
      for (const bad of ['abc', '123', `${randomUUID()}x`, "1' OR '1'='1"]) {
        const res = await t.get(`/v1/items/${encodeURIComponent(bad)}`).expect(404);
        expect(res.body).toMatchObject({ error: 'not_found', status: 404 });
        await t.patch(`/v1/items/${encodeURIComponent(bad)}`, { name: 'x' }).expect(404);
      }
    });

    it('accepts an upper-case id', async () => {
      const t = await newTenant(ctx);
      const uom = await uomIds(t);
      const item = (await t.post('/v1/items', { itemNo: 'UC', name: 'Upper', baseUomId: uom.EA.toUpperCase() }).expect(201)).body.data;
      expect(item.baseUomId).toBe(uom.EA);
      await t.get(`/v1/items/${item.id.toUpperCase()}`).expect(200);
    });
  });

  describe('validation', () => {
    let t: Tenant;
    let uom: Record<string, string>;
    beforeAll(async () => {
      t = await newTenant(ctx);
      uom = await uomIds(t);
    });

    const fieldsOf = (body: { details: { field: string }[] }) => body.details.map((d) => d.field);

    it('requires itemNo, name and baseUomId and rejects unknown fields, also nested ones', async () => {
      const res = await t.post('/v1/items', { extra: 1, identifiers: [{ type: 'sku', value: 'X', foo: 1 }] }).expect(400);
      expect(res.body).toMatchObject({ error: 'validation_failed', status: 400 });
      expect(res.body.details).toEqual(
        expect.arrayContaining([
          { field: 'itemNo', message: expect.any(String) },
          { field: 'name', message: expect.any(String) },
          { field: 'baseUomId', message: expect.any(String) },
          { field: 'extra', message: 'is not an allowed field' },
          { field: 'identifiers[0].foo', message: 'is not an allowed field' },
        ]),
      );
      const ok = await t.get('/v1/items').expect(200);
      expect(ok.body.count).toBe(0);
    });

    it.each([
      [{ itemNo: '' }, 'itemNo'],
      [{ itemNo: 'x'.repeat(65) }, 'itemNo'],
      [{ name: 'x'.repeat(201) }, 'name'],
      [{ name: null }, 'name'],
      [{ itemKind: 'goods' }, 'itemKind'],
      [{ lotTracking: 'optional' }, 'lotTracking'],
      [{ serialTracking: true }, 'serialTracking'],
      [{ isActive: 'yes' }, 'isActive'],
      [{ baseUomId: 'not-a-uuid' }, 'baseUomId'],
      [{ identifiers: [{ type: 'isbn', value: '1' }] }, 'identifiers[0].type'],
      [{ identifiers: [{ type: 'sku', value: '' }] }, 'identifiers[0].value'],
      [{ identifiers: 'sku' }, 'identifiers'],
      [{ attributes: [{ name: 'color', value: 3 }] }, 'attributes[0].value'],
      [{ uomConversions: [{ uomId: 'BOX', factor: 12 }] }, 'uomConversions[0].uomId'],
      // Lists of objects hold objects only: a nested array is not an element (it used to reach the database as a 500).
      [{ identifiers: [[{ type: 'sku', value: 'X' }]] }, 'identifiers'],
      [{ attributes: [[{ name: 'color', value: 'red' }]] }, 'attributes'],
      [{ uomConversions: [[{ factor: 12 }]] }, 'uomConversions'],
      [{ identifiers: [null] }, 'identifiers'],
    ])('rejects %j naming %s', async (patch, field) => {
      const res = await t.post('/v1/items', { itemNo: 'V', name: 'V', baseUomId: uom.EA, ...patch }).expect(400);
      expect(res.body.error).toBe('validation_failed');
      expect(fieldsOf(res.body)).toContain(field);
    });

    it('takes null in an optional field as the field left out: its default (CONTRACT §1)', async () => {
      const res = await t.post('/v1/items', { itemNo: `N-${randomUUID().slice(0, 8)}`, name: 'n', baseUomId: uom.EA, itemKind: null, lotTracking: null, isActive: null, identifiers: null }).expect(201);
      expect(res.body.data).toMatchObject({ itemKind: 'stock', lotTracking: 'none', isActive: true, identifiers: [] });
    });

    it.each([0, -1, 0.0000001, 1.5e-7, 1.1234567, '12', null])('rejects conversion factor %p', async (factor) => {
      const res = await t
        .post('/v1/items', { itemNo: 'F', name: 'F', baseUomId: uom.EA, uomConversions: [{ uomId: uom.BOX, factor }] })
        .expect(400);
      expect(fieldsOf(res.body)).toEqual(expect.arrayContaining(['uomConversions[0].factor']));
    });

    it('needs lot tracking for expiry tracking', async () => {
      const res = await t.post('/v1/items', { itemNo: 'EXP', name: 'E', baseUomId: uom.EA, expiryTracking: 'required' }).expect(400);
      expect(res.body).toMatchObject({ error: 'validation_failed', details: [{ field: 'expiryTracking', message: expect.any(String) }] });
      await t
        .post('/v1/items', { itemNo: 'EXP', name: 'E', baseUomId: uom.EA, expiryTracking: 'required', lotTracking: 'required' })
        .expect(201);
    });

    it.each([
      [{ identifiers: [{ type: 'sku', value: 'A' }, { type: 'sku', value: 'A' }] }, 'identifiers[1]'],
      [{ attributes: [{ name: 'c', value: '1' }, { name: 'd', value: '1' }, { name: 'c', value: '2' }] }, 'attributes[2].name'],
      [{ uomConversions: [{ uomId: 'BOX', factor: 12 }, { uomId: 'BOX', factor: 10 }] }, 'uomConversions[1].uomId'],
      [{ uomConversions: [{ uomId: 'KG', factor: 2 }, { uomId: 'EA', factor: 1 }] }, 'uomConversions[1].uomId'],
    ])('refuses repeats and a conversion of the base UOM inside one request: %j', async (lists, field) => {
      const body = JSON.parse(JSON.stringify(lists).replace(/"uomId":"(\w+)"/g, (_, code: string) => `"uomId":"${uom[code]}"`));
      const res = await t.post('/v1/items', { itemNo: 'REP', name: 'R', baseUomId: uom.EA, ...body }).expect(400);
      expect(res.body).toMatchObject({ error: 'validation_failed', details: [{ field }] });
    });

    it('allows the same identifier value under different types', async () => {
      const res = await t
        .post('/v1/items', { itemNo: 'TYPES', name: 'T', baseUomId: uom.EA, identifiers: [{ type: 'upc', value: '123' }, { type: 'ean', value: '123' }] })
        .expect(201);
      expect(res.body.data.identifiers).toEqual([{ type: 'ean', value: '123' }, { type: 'upc', value: '123' }]);
    });
  });

  describe('references', () => {
    it('answers 404 naming the field for an unknown base UOM or conversion UOM', async () => {
      const t = await newTenant(ctx);
      const uom = await uomIds(t);
      const base = await t.post('/v1/items', { itemNo: 'R1', name: 'R', baseUomId: randomUUID() }).expect(404);
      expect(base.body).toMatchObject({ error: 'not_found', status: 404, details: [{ field: 'baseUomId' }] });
      expect(base.body.message).toContain('baseUomId');

      const conv = await t
        .post('/v1/items', {
          itemNo: 'R1',
          name: 'R',
          baseUomId: uom.EA,
          uomConversions: [{ uomId: uom.BOX, factor: 12 }, { uomId: randomUUID(), factor: 2 }],
        })
        .expect(404);
      expect(conv.body).toMatchObject({ error: 'not_found', details: [{ field: 'uomConversions[1].uomId' }] });
      expect((await t.get('/v1/items').expect(200)).body.count).toBe(0);
    });
  });

  describe('uniqueness', () => {
    it('refuses a duplicate itemNo and an identifier another item holds, per tenant', async () => {
      const a = await newTenant(ctx);
      const uomA = await uomIds(a);
      await a.post('/v1/items', { itemNo: 'DUP', name: 'First', baseUomId: uomA.EA, identifiers: [{ type: 'gtin', value: '111' }] }).expect(201);

      const dupNo = await a.post('/v1/items', { itemNo: 'DUP', name: 'Second', baseUomId: uomA.EA }).expect(409);
      expect(dupNo.body).toMatchObject({ error: 'duplicate', status: 409 });
      expect(dupNo.body.message).toBe('An item with itemNo "DUP" already exists');

      const dupId = await a
        .post('/v1/items', { itemNo: 'OTHER', name: 'Other', baseUomId: uomA.EA, identifiers: [{ type: 'gtin', value: '111' }] })
        .expect(409);
      expect(dupId.body).toMatchObject({ error: 'duplicate', status: 409 });
      expect(dupId.body.message).toMatch(/identifiers/);
      // the failed create left nothing behind
      expect((await a.get('/v1/items?q=OTHER').expect(200)).body.count).toBe(0);

      const b = await newTenant(ctx);
      const uomB = await uomIds(b);
      await b.post('/v1/items', { itemNo: 'DUP', name: 'B', baseUomId: uomB.EA, identifiers: [{ type: 'gtin', value: '111' }] }).expect(201);
    });
  });

  describe('update', () => {
    it('changes fields, replaces the given lists, keeps the others and bumps the version', async () => {
      const t = await newTenant(ctx);
      const uom = await uomIds(t);
      const original = (
        await t
          .post('/v1/items', {
            itemNo: 'UP-1',
            name: 'Before',
            description: 'desc',
            baseUomId: uom.EA,
            identifiers: [{ type: 'sku', value: 'S-1' }],
            attributes: [{ name: 'color', value: 'red' }],
            uomConversions: [{ uomId: uom.BOX, factor: 10 }],
          })
          .expect(201)
      ).body.data;

      const editorToken = await ctx.idp.token({ tenantId: t.tenantId, permissions: ALL, sub: 'editor-1' });
      // The database's clock just before the change: updatedAt is at least this (equal milliseconds allowed).
      const dbBefore = ((await ctx.db.query('SELECT now() AS t')) as Array<{ t: Date }>)[0].t.getTime();
      const res = await ctx.http
        .patch(`/v1/items/${original.id}`)
        .set({ Authorization: `Bearer ${editorToken}` })
        .send({
          itemNo: 'UP-1B',
          name: 'After',
          description: null,
          itemKind: 'service',
          isActive: false,
          identifiers: [{ type: 'mpn', value: 'M-9' }, { type: 'other', value: 'O' }],
          uomConversions: [],
        })
        .expect(200);
      const updated = res.body.data;
      expect(updated).toEqual({
        ...original,
        itemNo: 'UP-1B',
        name: 'After',
        description: null,
        itemKind: 'service',
        isActive: false,
        identifiers: [{ type: 'mpn', value: 'M-9' }, { type: 'other', value: 'O' }],
        attributes: [{ name: 'color', value: 'red' }],
        uomConversions: [],
        version: 2,
        updatedBy: 'editor-1',
        updatedAt: expect.stringMatching(ISO_MS),
      });
      expect(new Date(updated.updatedAt).getTime()).toBeGreaterThanOrEqual(Math.max(dbBefore, new Date(original.updatedAt).getTime()));
      expect(res.headers.etag).toBe('"2"');
      expect((await t.get(`/v1/items/${original.id}`).expect(200)).body.data).toEqual(updated);

      const [row] = await ctx.db.query(`SELECT created_by, updated_by FROM items WHERE id = $1`, [original.id]);
      expect(row).toEqual({ created_by: subOf(t.token), updated_by: 'editor-1' });
      // the old identifier is free again
      await t.post('/v1/items', { itemNo: 'UP-2', name: 'x', baseUomId: uom.EA, identifiers: [{ type: 'sku', value: 'S-1' }] }).expect(201);

      const lists = await t.patch(`/v1/items/${original.id}`, { attributes: [{ name: 'size', value: 'M' }] }).expect(200);
      expect(lists.body.data).toMatchObject({ version: 3, name: 'After', attributes: [{ name: 'size', value: 'M' }], identifiers: updated.identifiers });
    });

    it('honours If-Match and ignores an empty patch', async () => {
      const t = await newTenant(ctx);
      const uom = await uomIds(t);
      const item = (await t.post('/v1/items', { itemNo: 'IM', name: 'v1', baseUomId: uom.EA }).expect(201)).body.data;

      const ok = await t.patch(`/v1/items/${item.id}`, { name: 'v2' }).set('If-Match', '"1"').expect(200);
      expect(ok.body.data.version).toBe(2);
      const stale = await t.patch(`/v1/items/${item.id}`, { name: 'v3' }).set('If-Match', '"1"').expect(412);
      expect(stale.body).toMatchObject({ error: 'version_conflict', status: 412 });
      const bad = await t.patch(`/v1/items/${item.id}`, { name: 'v3' }).set('If-Match', 'yesterday').expect(400);
      expect(bad.body.error).toBe('validation_failed');

      const empty = await t.patch(`/v1/items/${item.id}`, {}).expect(200);
      expect(empty.body.data).toMatchObject({ name: 'v2', version: 2 });
      expect(empty.headers.etag).toBe('"2"');
    });

    it('validates the merged item and the references of a patch', async () => {
      const t = await newTenant(ctx);
      const uom = await uomIds(t);
      const item = (
        await t.post('/v1/items', { itemNo: 'PV', name: 'p', baseUomId: uom.EA, uomConversions: [{ uomId: uom.BOX, factor: 6 }] }).expect(201)
      ).body.data;

      // null in an optional field is the field left out (CONTRACT §1): nothing changes.
      const nulls = await t.patch(`/v1/items/${item.id}`, { itemNo: null, isActive: null, identifiers: null }).expect(200);
      expect(nulls.body.data).toMatchObject({ itemNo: 'PV', isActive: true, identifiers: [] });
      const nested = await t.patch(`/v1/items/${item.id}`, {
        identifiers: [[{ type: 'sku', value: 'N-1' }]],
        attributes: [[{ name: 'color', value: 'red' }]],
      }).expect(400);
      expect(nested.body).toMatchObject({ error: 'validation_failed', status: 400 });
      expect(nested.body.details).toEqual([
        { field: 'identifiers', message: 'must contain only objects' },
        { field: 'attributes', message: 'must contain only objects' },
      ]);
      const unknownField = await t.patch(`/v1/items/${item.id}`, { color: 'red' }).expect(400);
      expect(unknownField.body.details).toEqual([{ field: 'color', message: 'is not an allowed field' }]);

      await t.patch(`/v1/items/${item.id}`, { expiryTracking: 'required' }).expect(400);
      await t.patch(`/v1/items/${item.id}`, { expiryTracking: 'required', lotTracking: 'required' }).expect(200);
      const lotOff = await t.patch(`/v1/items/${item.id}`, { lotTracking: 'none' }).expect(400);
      expect(lotOff.body.details).toEqual([{ field: 'expiryTracking', message: expect.any(String) }]);

      const baseIsConversion = await t.patch(`/v1/items/${item.id}`, { baseUomId: uom.BOX }).expect(400);
      expect(baseIsConversion.body.details).toEqual([{ field: 'baseUomId', message: expect.any(String) }]);
      const moved = await t.patch(`/v1/items/${item.id}`, { baseUomId: uom.BOX, uomConversions: [{ uomId: uom.EA, factor: 0.5 }] }).expect(200);
      expect(moved.body.data).toMatchObject({ baseUomId: uom.BOX, uomConversions: [{ uomId: uom.EA, factor: 0.5 }] });

      const conv = await t.patch(`/v1/items/${item.id}`, { uomConversions: [{ uomId: uom.BOX, factor: 2 }] }).expect(400);
      expect(conv.body.details).toEqual([{ field: 'uomConversions[0].uomId', message: 'must not be the base UOM' }]);
      const unknownUom = await t.patch(`/v1/items/${item.id}`, { uomConversions: [{ uomId: randomUUID(), factor: 2 }] }).expect(404);
      expect(unknownUom.body.details).toEqual([{ field: 'uomConversions[0].uomId', message: 'not found' }]);
      const unknownBase = await t.patch(`/v1/items/${item.id}`, { baseUomId: randomUUID() }).expect(404);
      expect(unknownBase.body.details).toEqual([{ field: 'baseUomId', message: 'not found' }]);

      expect((await t.get(`/v1/items/${item.id}`).expect(200)).body.data.version).toBe(3);
      await t.patch(`/v1/items/${randomUUID()}`, { name: 'x' }).expect(404);
    });

    it('refuses to take another item\'s itemNo or identifier and then changes nothing', async () => {
      const t = await newTenant(ctx);
      const uom = await uomIds(t);
      await t.post('/v1/items', { itemNo: 'TAKEN', name: 'a', baseUomId: uom.EA, identifiers: [{ type: 'upc', value: 'U1' }] }).expect(201);
      const item = (
        await t.post('/v1/items', { itemNo: 'MINE', name: 'b', baseUomId: uom.EA, identifiers: [{ type: 'upc', value: 'U2' }] }).expect(201)
      ).body.data;

      expect((await t.patch(`/v1/items/${item.id}`, { itemNo: 'TAKEN' }).expect(409)).body.error).toBe('duplicate');
      const dupId = await t
        .patch(`/v1/items/${item.id}`, { name: 'renamed', identifiers: [{ type: 'upc', value: 'U3' }, { type: 'upc', value: 'U1' }] })
        .expect(409);
      expect(dupId.body.error).toBe('duplicate');
      expect((await t.get(`/v1/items/${item.id}`).expect(200)).body.data).toEqual(item);
    });

    it('freezes itemNo, base UOM and tracking modes once the item has ledger lines', async () => {
      const t = await newTenant(ctx);
      const uom = await uomIds(t);
      const item = (await t.post('/v1/items', { itemNo: 'LEDGER', name: 'posted', baseUomId: uom.EA }).expect(201)).body.data;
      const facility = (await t.post('/v1/facilities', { code: 'F1', name: 'F1' }).expect(201)).body.data;
      const location = (await t.post(`/v1/facilities/${facility.id}/locations`, { code: 'BIN', name: 'Bin' }).expect(201)).body.data;

      // Before any posting every field may change.
      const free = await t.patch(`/v1/items/${item.id}`, { itemNo: 'LEDGER-2', lotTracking: 'required' }).expect(200);
      expect(free.body.data).toMatchObject({ itemNo: 'LEDGER-2', lotTracking: 'required', version: 2 });
      await t.patch(`/v1/items/${item.id}`, { lotTracking: 'none' }).expect(200);

      await t.post('/v1/inventory/adjustments', { itemId: item.id, locationId: location.id, qtyDelta: 5, reason: 'first stock' }).expect(201);

      for (const change of [
        { itemNo: 'LEDGER-3' },
        { lotTracking: 'required' },
        { serialTracking: 'required' },
        { expiryTracking: 'required', lotTracking: 'required' },
        { baseUomId: uom.KG },
      ]) {
        const res = await t.patch(`/v1/items/${item.id}`, change).expect(409);
        expect(res.body).toMatchObject({ error: 'invalid_state', status: 409 });
        expect(res.body.message).toContain(Object.keys(change)[0]);
      }
      // Other fields, and the frozen ones re-sent unchanged, are still fine.
      const ok = await t.patch(`/v1/items/${item.id}`, { itemNo: 'LEDGER-2', lotTracking: 'none', name: 'renamed', isActive: false }).expect(200);
      expect(ok.body.data).toMatchObject({ itemNo: 'LEDGER-2', name: 'renamed', isActive: false, version: 4 });
    });
  });

  describe('list', () => {
    it('pages newest first with a stable order and a total count', async () => {
      const t = await newTenant(ctx);
      const uom = await uomIds(t);
      const ids: string[] = [];
      for (let i = 1; i <= 5; i++) {
        ids.push((await t.post('/v1/items', { itemNo: `P-${i}`, name: `Paged ${i}`, baseUomId: uom.EA }).expect(201)).body.data.id);
      }
      const seen: string[] = [];
      for (const offset of [0, 2, 4]) {
        const res = await t.get(`/v1/items?limit=2&offset=${offset}&unknownParam=1`).expect(200);
        expect(res.body).toMatchObject({ count: 5, limit: 2, offset });
        seen.push(...res.body.data.map((i: { id: string }) => i.id));
      }
      expect(seen).toEqual([...ids].reverse());
      expect((await t.get('/v1/items?offset=10').expect(200)).body).toEqual({ data: [], count: 5, limit: 50, offset: 10, nextCursor: null });

      for (const q of ['limit=0', 'limit=501', 'limit=abc', 'limit=1.5', 'offset=-1', 'offset=x']) {
        const res = await t.get(`/v1/items?${q}`).expect(400);
        expect(res.body.error).toBe('validation_failed');
        expect(new Set(res.body.details.map((d: { field: string }) => d.field))).toEqual(new Set([q.split('=')[0]]));
      }
      expect((await t.get('/v1/items?limit=500').expect(200)).body.limit).toBe(500);
    });

    it('loads the child lists of a whole page', async () => {
      const t = await newTenant(ctx);
      const uom = await uomIds(t);
      for (let i = 1; i <= 3; i++) {
        await t
          .post('/v1/items', {
            itemNo: `C-${i}`,
            name: 'children',
            baseUomId: uom.EA,
            identifiers: [{ type: 'sku', value: `SKU-${i}` }],
            attributes: [{ name: 'n', value: String(i) }],
            uomConversions: [{ uomId: uom.BOX, factor: i * 10 }],
          })
          .expect(201);
      }
      const res = await t.get('/v1/items').expect(200);
      expect(res.body.data.map((i: { itemNo: string; identifiers: unknown; attributes: unknown; uomConversions: unknown }) => [i.itemNo, i.identifiers, i.attributes, i.uomConversions])).toEqual(
        [3, 2, 1].map((i) => [`C-${i}`, [{ type: 'sku', value: `SKU-${i}` }], [{ name: 'n', value: String(i) }], [{ uomId: uom.BOX, factor: i * 10 }]]),
      );
    });

    it('searches name and itemNo case-insensitively, wildcards taken literally, and filters', async () => {
      const t = await newTenant(ctx);
      const uom = await uomIds(t);
      const make = async (itemNo: string, name: string, extra: object = {}) =>
        (await t.post('/v1/items', { itemNo, name, baseUomId: uom.EA, ...extra }).expect(201)).body.data.id as string;
      const blue = await make('BW-1', 'Blue Widget');
      const red = await make('WIDGET-RED', 'Red thing', { itemKind: 'non_stock' });
      const pct = await make('COT-1', '100% cotton', { isActive: false });
      const plain = await make('COT-2', '1000 cotton');
      const under = await make('A_B', 'underscore');
      await make('AXB', 'no underscore');

      const search = async (query: string) => {
        const res = await t.get(`/v1/items?${query}`).expect(200);
        expect(res.body.count).toBe(res.body.data.length);
        return res.body.data.map((i: { id: string }) => i.id).sort();
      };
      expect(await search('q=wIdGeT')).toEqual([blue, red].sort());
      expect(await search('q=cot-')).toEqual([pct, plain].sort());
      expect(await search(`q=${encodeURIComponent('100%')}`)).toEqual([pct]);
      expect(await search(`q=${encodeURIComponent('0% c')}`)).toEqual([pct]);
      expect(await search('q=A_B')).toEqual([under]);
      expect(await search('q=nothing-matches')).toEqual([]);
      expect(await search('itemKind=non_stock')).toEqual([red]);
      expect(await search('isActive=false')).toEqual([pct]);
      expect((await search('isActive=true')).length).toBe(5);
      expect(await search('q=cotton&isActive=true')).toEqual([plain]);
      await t.get('/v1/items?itemKind=goods').expect(400);
      await t.get('/v1/items?isActive=maybe').expect(400);
    });
  });

  describe('tenancy and permissions', () => {
    it('hides another tenant\'s items and refuses its UOMs as references', async () => {
      const a = await newTenant(ctx);
      const b = await newTenant(ctx);
      const uomA = await uomIds(a);
      const item = (await a.post('/v1/items', { itemNo: 'SECRET', name: 'Secret', baseUomId: uomA.EA }).expect(201)).body.data;

      expect((await b.get(`/v1/items/${item.id}`).expect(404)).body.error).toBe('not_found');
      await b.patch(`/v1/items/${item.id}`, { name: 'stolen' }).expect(404);
      expect((await b.get('/v1/items').expect(200)).body).toMatchObject({ data: [], count: 0 });
      expect((await b.get('/v1/items?q=SECRET').expect(200)).body.count).toBe(0);
      // The search function applies the tenant policy itself: another tenant, or none, finds nothing.
      const searchAs = (tenantId: string | null) =>
        ctx.db.transaction(async (m) => {
          await m.query(`SELECT set_config('role', 'inventory_app', true), set_config('app.tenant_id', $1, true)`, [tenantId ?? '']);
          return (await m.query(`SELECT id FROM item_search('%SECRET%')`)).map((r: { id: string }) => r.id);
        });
      expect(await searchAs(a.tenantId)).toEqual([item.id]);
      expect(await searchAs(b.tenantId)).toEqual([]);
      expect(await searchAs(null)).toEqual([]);

      const foreignBase = await b.post('/v1/items', { itemNo: 'B1', name: 'b', baseUomId: uomA.EA }).expect(404);
      expect(foreignBase.body.details).toEqual([{ field: 'baseUomId', message: 'not found' }]);
      const uomB = await uomIds(b);
      const foreignConv = await b
        .post('/v1/items', { itemNo: 'B1', name: 'b', baseUomId: uomB.EA, uomConversions: [{ uomId: uomA.BOX, factor: 2 }] })
        .expect(404);
      expect(foreignConv.body.details).toEqual([{ field: 'uomConversions[0].uomId', message: 'not found' }]);
      expect((await a.get(`/v1/items/${item.id}`).expect(200)).body.data.name).toBe('Secret');
    });

    it('needs catalog:read to read and catalog:write to write', async () => {
      const owner = await newTenant(ctx);
      const uom = await uomIds(owner);
      const item = (await owner.post('/v1/items', { itemNo: 'PERM', name: 'p', baseUomId: uom.EA }).expect(201)).body.data;

      const readToken = await ctx.idp.token({ tenantId: owner.tenantId, permissions: ['catalog:read'] });
      const reader = { Authorization: `Bearer ${readToken}` };
      await ctx.http.get('/v1/items').set(reader).expect(200);
      await ctx.http.get(`/v1/items/${item.id}`).set(reader).expect(200);
      const post = await ctx.http.post('/v1/items').set(reader).send({ itemNo: 'X', name: 'x', baseUomId: uom.EA }).expect(403);
      expect(post.body).toMatchObject({ error: 'forbidden', status: 403 });
      await ctx.http.patch(`/v1/items/${item.id}`).set(reader).send({ name: 'x' }).expect(403);

      const otherToken = await ctx.idp.token({ tenantId: owner.tenantId, permissions: ['inventory:read', 'catalog:write'] });
      await ctx.http.get('/v1/items').set({ Authorization: `Bearer ${otherToken}` }).expect(403);
      await ctx.http.get('/v1/items').expect(401);
      expect((await owner.get(`/v1/items/${item.id}`).expect(200)).body.data).toEqual(item);
    });
  });

  it('describes the item bodies in the OpenAPI document', async () => {
    const doc = (await ctx.http.get('/openapi.json').expect(200)).body;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/items', '/v1/items/{id}']));
    const create = doc.components.schemas.CreateItemDto;
    expect(create.required).toEqual(expect.arrayContaining(['itemNo', 'name', 'baseUomId']));
    expect(create.properties.itemKind.enum).toEqual(['stock', 'non_stock', 'service']);
    expect(create.properties.identifiers.items.$ref).toBe('#/components/schemas/ItemIdentifierDto');
    expect(doc.components.schemas.ItemIdentifierDto.properties.type.enum).toContain('supplier_sku');
    expect(doc.components.schemas.UpdateItemDto.required ?? []).toEqual([]);
    expect(doc.paths['/v1/items/{id}'].patch.description).toContain('ledger lines');
  });
});
