import { newTenant, startApp, Tenant, TestContext } from '../support/app';
import { adjust, InventoryFixture, inventoryFixture, lotId, newItem, onHand, transactionsOf } from '../support/fixtures';
import { auditFields, ISO_MS, UUID } from '../support/matchers';
import { fromDist } from '../support/dist';
import type * as VerifyModule from '../../src/inventory/ledger/verify.sql';

const { verifyLedger } = fromDist<typeof VerifyModule>('inventory/ledger/verify.sql');

describe('Production: BOMs and work orders', () => {
  let ctx: TestContext;
  let t: Tenant;
  let f: InventoryFixture;

  beforeAll(async () => {
    ctx = await startApp();
    t = await newTenant(ctx);
    f = await inventoryFixture(t, { locations: 2 });
  });
  afterAll(() => ctx.close());

  const B = '/v1/production/boms';
  const W = '/v1/production/work-orders';
  const item = (spec: Record<string, unknown> = {}) => newItem(t, f.uom('EA'), spec);
  const bom = (body: Record<string, unknown>, status = 201) => t.post(B, body).expect(status);
  const activeBom = async (body: Record<string, unknown>) => {
    const b = (await bom(body)).body.data;
    return (await t.post(`${B}/${b.id}/activate`).expect(200)).body.data;
  };
  const wo = (body: Record<string, unknown>, status = 201) => t.post(W, { facilityId: f.facility.id, outputLocationId: f.locations[1].id, ...body }).expect(status);
  const act = (id: string, action: string, status = 200, body?: object) => t.post(`${W}/${id}/${action}`, body).expect(status);
  const reservationsOf = async (demandId: string, status = '') =>
    (await t.get(`/v1/inventory/reservations?demandId=${demandId}${status ? `&status=${status}` : ''}&limit=500`).expect(200)).body.data as Array<{ id: string; itemId: string; qty: number; status: string; qtyFulfilled: number }>;
  const atp = async (itemId: string) => {
    const rows = (await t.get(`/v1/inventory/availability?groupBy=facility&itemId=${itemId}&facilityId=${f.facility.id}`).expect(200)).body.data;
    return rows[0]?.qtyAvailable ?? 0;
  };

  describe('BOMs', () => {
    it('creates versions per output item (1, 2, …), exact shape; activating a version obsoletes the previous one', async () => {
      const out = await item();
      const part = await item({ uomConversions: [{ uomId: f.uom('BOX'), factor: 12 }] });
      const v1 = await bom({ itemId: out.id, outputQty: 2, notes: 'first', components: [{ itemId: part.id, qtyPer: 1, uomId: f.uom('BOX'), scrapFactor: 0.05 }] });
      expect(v1.body.data).toEqual({
        id: expect.stringMatching(UUID), itemId: out.id, versionNo: 1, status: 'draft', outputQty: 2, notes: 'first',
        components: [{ id: expect.stringMatching(UUID), lineNo: 1, itemId: part.id, qtyPer: 1, uomId: f.uom('BOX'), scrapFactor: 0.05 }],
        activatedAt: null, ...auditFields(t.token),
      });
      expect(v1.headers.etag).toBe('"1"');
      const v2 = (await bom({ itemId: out.id, components: [{ itemId: part.id, qtyPer: 3 }] })).body.data;
      expect(v2.versionNo).toBe(2);
      expect((await t.post(`${B}/${v1.body.data.id}/activate`).set('If-Match', '"1"').expect(200)).body.data).toMatchObject({ status: 'active', version: 2, activatedAt: expect.stringMatching(ISO_MS) });
      await t.post(`${B}/${v1.body.data.id}/activate`).expect(409);
      await t.patch(`${B}/${v1.body.data.id}`, { notes: 'x' }).expect(409);
      await t.post(`${B}/${v2.id}/activate`).expect(200);
      expect((await t.get(`${B}/${v1.body.data.id}`).expect(200)).body.data.status).toBe('obsolete');
      expect((await t.get(`${B}?itemId=${out.id}&status=active`).expect(200)).body.data.map((b: { id: string }) => b.id)).toEqual([v2.id]);
      expect((await t.get(`${B}?itemId=${out.id}`).expect(200)).body.count).toBe(2);
    });

    it('PATCH changes a draft (components replaced) with If-Match', async () => {
      const out = await item();
      const [a, b] = [await item(), await item()];
      const draft = (await bom({ itemId: out.id, components: [{ itemId: a.id, qtyPer: 1 }] })).body.data;
      const res = await t.patch(`${B}/${draft.id}`, { outputQty: 5, components: [{ itemId: b.id, qtyPer: 2 }, { itemId: a.id, qtyPer: 1 }] }).set('If-Match', '"1"').expect(200);
      expect(res.body.data).toMatchObject({ version: 2, outputQty: 5, components: [{ lineNo: 1, itemId: b.id, qtyPer: 2 }, { lineNo: 2, itemId: a.id }] });
      await t.patch(`${B}/${draft.id}`, { notes: 'stale' }).set('If-Match', '"1"').expect(412);
    });

    it('refuses cycles: the output itself, and an item whose active BOM uses the output at depth 2 (also at activation)', async () => {
      const [x, y, z] = [await item(), await item(), await item()];
      expect((await bom({ itemId: x.id, components: [{ itemId: x.id, qtyPer: 1 }] }, 409)).body.message).toMatch(/cycle/);
      await activeBom({ itemId: y.id, components: [{ itemId: z.id, qtyPer: 1 }] }); // y ← z
      await activeBom({ itemId: z.id, components: [{ itemId: x.id, qtyPer: 1 }] }); // z ← x
      // x made from y: y ← z ← x, a cycle at depth 2
      const res = await bom({ itemId: x.id, components: [{ itemId: f.item.id, qtyPer: 1 }, { itemId: y.id, qtyPer: 1 }] }, 409);
      expect(res.body).toMatchObject({ error: 'invalid_state', message: expect.stringMatching(/cycle.*components\[1\]/) });
      // a draft written before the cycle closed is refused when activated
      const [p, q] = [await item(), await item()];
      const early = (await bom({ itemId: p.id, components: [{ itemId: q.id, qtyPer: 1 }] })).body.data; // p ← q (draft)
      await activeBom({ itemId: q.id, components: [{ itemId: p.id, qtyPer: 1 }] }); // q ← p, fine while p's BOM is a draft
      expect((await t.post(`${B}/${early.id}/activate`).expect(409)).body.message).toMatch(/cycle/);
    });

    it('refuses bad components: unknown 404, non-stock 400, inactive 409, unit of another item 400, too many decimals 400, no components 400', async () => {
      const out = await item();
      await bom({ itemId: out.id, components: [{ itemId: '00000000-0000-4000-8000-000000000000', qtyPer: 1 }] }, 404);
      await bom({ itemId: out.id, components: [{ itemId: (await item({ itemKind: 'service' })).id, qtyPer: 1 }] }, 400);
      await bom({ itemId: out.id, components: [{ itemId: (await item({ isActive: false })).id, qtyPer: 1 }] }, 409);
      await bom({ itemId: out.id, components: [{ itemId: f.item.id, qtyPer: 1, uomId: f.uom('KG') }] }, 400);
      await bom({ itemId: out.id, components: [{ itemId: f.item.id, qtyPer: 0.5 }] }, 400);
      await bom({ itemId: out.id, components: [] }, 400);
      await bom({ itemId: out.id, components: [{ itemId: f.item.id, qtyPer: 1, scrapFactor: -0.1 }] }, 400);
      expect((await t.get(`${B}?itemId=${out.id}`).expect(200)).body.count).toBe(0);
    });

    it('refuses an outputQty with more decimals than the output item\'s base unit allows (400 naming outputQty), on create and PATCH', async () => {
      const components = [{ itemId: f.item.id, qtyPer: 1 }];
      const out = await item(); // EA: whole numbers
      expect((await bom({ itemId: out.id, outputQty: 0.5, components }, 400)).body).toMatchObject({
        error: 'validation_failed', details: [expect.objectContaining({ field: 'outputQty' })],
      });
      const draft = (await bom({ itemId: out.id, outputQty: 2, components })).body.data;
      expect((await t.patch(`${B}/${draft.id}`, { outputQty: 1.5 }).expect(400)).body.details).toEqual([expect.objectContaining({ field: 'outputQty' })]);
      expect((await t.get(`${B}/${draft.id}`).expect(200)).body.data).toMatchObject({ outputQty: 2, version: 1 });
      const bulk = await newItem(t, f.uom('KG')); // KG: 3 decimals
      await bom({ itemId: bulk.id, outputQty: 0.125, components });
      await bom({ itemId: bulk.id, outputQty: 0.0125, components }, 400);
    });

    it('parallel activations of versions of one item leave exactly one active', async () => {
      const out = await item();
      const versions = [];
      for (let i = 0; i < 5; i++) versions.push((await bom({ itemId: out.id, components: [{ itemId: f.item.id, qtyPer: i + 1 }] })).body.data);
      const results = await Promise.all(versions.map((v) => t.post(`${B}/${v.id}/activate`)));
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      const rows = await ctx.db.query(`SELECT status, count(*)::int AS n FROM boms WHERE tenant_id = $1 AND item_id = $2 GROUP BY status ORDER BY status`, [t.tenantId, out.id]);
      expect(rows).toEqual([{ status: 'active', n: 1 }, { status: 'obsolete', n: 4 }]);
    });

    it('parallel creations of versions of one item get distinct version numbers 1..n', async () => {
      const out = await item();
      const results = await Promise.all(Array.from({ length: 6 }, () => t.post(B, { itemId: out.id, components: [{ itemId: f.item.id, qtyPer: 1 }] })));
      expect(results.map((r) => r.status)).toEqual(Array(6).fill(201));
      expect(results.map((r) => r.body.data.versionNo).sort()).toEqual([1, 2, 3, 4, 5, 6]);
    });
  });

  describe('work orders', () => {
    /** An output item whose active BOM makes 2 from 3 EA of `a` (10% scrap) and 1 BOX (12 EA) of `b`; stock of both at location 0. */
    async function ground(stockA = 100, stockB = 100) {
      const out = await item();
      const a = await item();
      const b = await item({ uomConversions: [{ uomId: f.uom('BOX'), factor: 12 }] });
      const active = await activeBom({
        itemId: out.id, outputQty: 2,
        components: [{ itemId: a.id, qtyPer: 3, scrapFactor: 0.1 }, { itemId: b.id, qtyPer: 1, uomId: f.uom('BOX') }],
      });
      if (stockA) await adjust(t, { itemId: a.id, locationId: f.locations[0].id, qtyDelta: stockA });
      if (stockB) await adjust(t, { itemId: b.id, locationId: f.locations[0].id, qtyDelta: stockB });
      return { out, a, b, bom: active };
    }

    it('creates a draft from the active BOM: requirements exact in base units, rounded up; WO number', async () => {
      const g = await ground();
      const res = await wo({ itemId: g.out.id, qtyPlanned: 5, dueDate: '2027-02-01' });
      // a: 3 × 5 / 2 × 1.1 = 8.25 → 9 EA; b: 1 × 5 / 2 = 2.5 BOX = 30 EA
      expect(res.body.data).toEqual({
        id: expect.stringMatching(UUID), woNo: expect.stringMatching(/^WO-\d{6}$/), itemId: g.out.id, bomId: g.bom.id, facilityId: f.facility.id,
        qtyPlanned: 5, qtyCompleted: 0, status: 'draft', outputLocationId: f.locations[1].id, dueDate: '2027-02-01',
        components: [
          { id: expect.stringMatching(UUID), lineNo: 1, itemId: g.a.id, qtyRequired: 9, qtyIssued: 0, reservationId: null },
          { id: expect.stringMatching(UUID), lineNo: 2, itemId: g.b.id, qtyRequired: 30, qtyIssued: 0, reservationId: null },
        ],
        transactionId: null, releasedAt: null, completedAt: null, ...auditFields(t.token),
      });
      expect((await t.get(`${W}/${res.body.data.id}`).expect(200)).body.data).toEqual(res.body.data);
    });

    it('explodes exactly: qtyPer × qtyPlanned × (1 + scrapFactor) × factor is divided by outputQty last, so an exact requirement is not rounded up', async () => {
      const cake = await item();
      const flour = await newItem(t, f.uom('KG'));
      const sugar = await newItem(t, f.uom('KG'), { uomConversions: [{ uomId: f.uom('BOX'), factor: 3 }] });
      await adjust(t, { itemId: flour.id, locationId: f.locations[0].id, qtyDelta: 0.25 });
      await adjust(t, { itemId: sugar.id, locationId: f.locations[0].id, qtyDelta: 0.5 });
      await activeBom({
        itemId: cake.id, outputQty: 6,
        components: [{ itemId: flour.id, qtyPer: 1, scrapFactor: 0.5 }, { itemId: sugar.id, qtyPer: 1, uomId: f.uom('BOX') }],
      });
      // flour: 1 × 1 × 1.5 / 6 = 0.25 KG (not 0.251); sugar: 1 BOX × 1 × 3 / 6 = 0.5 KG (not 0.501)
      const order = (await wo({ itemId: cake.id, qtyPlanned: 1 })).body.data;
      expect(order.components.map((c: { qtyRequired: number }) => c.qtyRequired)).toEqual([0.25, 0.5]);
      await act(order.id, 'release');
      const done = (await act(order.id, 'complete')).body.data;
      expect(done.components.map((c: { qtyIssued: number }) => c.qtyIssued)).toEqual([0.25, 0.5]);
      expect(await onHand(t, { itemId: flour.id, locationId: f.locations[0].id })).toBe(0);
      expect(await onHand(t, { itemId: sugar.id, locationId: f.locations[0].id })).toBe(0);
    });

    it('refuses: no active BOM 409, a BOM of another item 400, a draft BOM 409, output location of another facility 400, unknown 404', async () => {
      const g = await ground(0, 0);
      const bare = await item();
      expect((await wo({ itemId: bare.id, qtyPlanned: 1 }, 409)).body.message).toMatch(/no active BOM/);
      await wo({ itemId: bare.id, qtyPlanned: 1, bomId: g.bom.id }, 400);
      const draft = (await bom({ itemId: g.out.id, components: [{ itemId: g.a.id, qtyPer: 1 }] })).body.data;
      await wo({ itemId: g.out.id, qtyPlanned: 1, bomId: draft.id }, 409);
      const other = (await t.post('/v1/facilities', { code: `PL-${Date.now()}`, name: 'Plant' }).expect(201)).body.data;
      const loc = (await t.post(`/v1/facilities/${other.id}/locations`, { code: 'P1', name: 'P1' }).expect(201)).body.data;
      await wo({ itemId: g.out.id, qtyPlanned: 1, outputLocationId: loc.id }, 400);
      await wo({ itemId: '00000000-0000-4000-8000-000000000000', qtyPlanned: 1 }, 404);
      await wo({ itemId: g.out.id, qtyPlanned: 0 }, 400);
    });

    it('release reserves every component (all or nothing, every shortfall listed); complete issues them and posts the output in one transaction', async () => {
      const g = await ground();
      const order = (await wo({ itemId: g.out.id, qtyPlanned: 5 })).body.data;
      const released = (await act(order.id, 'release')).body.data;
      expect(released).toMatchObject({ status: 'released', version: 2, releasedAt: expect.stringMatching(ISO_MS) });
      const holds = await reservationsOf(order.id);
      expect(holds.map((r) => [r.itemId, r.qty, r.status]).sort()).toEqual([[g.a.id, 9, 'open'], [g.b.id, 30, 'open']].sort());
      expect(released.components.map((c: { reservationId: string }) => c.reservationId).sort()).toEqual(holds.map((r) => r.id).sort());
      expect(await atp(g.a.id)).toBe(91);
      await act(order.id, 'release', 409);

      const done = (await act(order.id, 'complete')).body.data;
      expect(done).toMatchObject({ status: 'completed', qtyCompleted: 5, transactionId: expect.stringMatching(UUID), components: [{ qtyIssued: 9 }, { qtyIssued: 30 }] });
      const txns = await transactionsOf(t, order.id);
      expect(txns.count).toBe(1);
      expect(txns.data[0]).toMatchObject({ id: done.transactionId, type: 'production', sourceType: 'work_order', sourceId: order.id });
      expect(txns.data[0].lines.map((l) => [l.itemId, l.locationId, l.qtyDelta])).toEqual([
        [g.a.id, f.locations[0].id, -9], [g.b.id, f.locations[0].id, -30], [g.out.id, f.locations[1].id, 5],
      ]);
      expect(await onHand(t, { itemId: g.a.id, locationId: f.locations[0].id })).toBe(91);
      expect(await onHand(t, { itemId: g.b.id, locationId: f.locations[0].id })).toBe(70);
      expect(await onHand(t, { itemId: g.out.id, locationId: f.locations[1].id })).toBe(5);
      expect((await reservationsOf(order.id, 'fulfilled')).map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
      expect(await atp(g.a.id)).toBe(91);
      for (const a of ['release', 'complete', 'cancel']) expect((await act(order.id, a, 409)).body.message).toMatch(/is completed/);
    });

    it('a partial completion issues scaled components (rounded up) and frees the rest of the reservations', async () => {
      const g = await ground();
      const order = (await wo({ itemId: g.out.id, qtyPlanned: 4 })).body.data; // a: 3 × 4 / 2 × 1.1 = 6.6 → 7; b: 2 BOX = 24
      await act(order.id, 'release');
      await act(order.id, 'complete', 400, { qtyCompleted: 5 });
      const done = (await act(order.id, 'complete', 200, { qtyCompleted: 1 })).body.data;
      // a: 7 × 1/4 = 1.75 → 2; b: 24 / 4 = 6
      expect(done.components.map((c: { qtyIssued: number }) => c.qtyIssued)).toEqual([2, 6]);
      expect(done.qtyCompleted).toBe(1);
      expect(await onHand(t, { itemId: g.a.id, locationId: f.locations[0].id })).toBe(98);
      expect(await onHand(t, { itemId: g.b.id, locationId: f.locations[0].id })).toBe(94);
      expect(await atp(g.a.id)).toBe(98); // the 5 still reserved were freed
      expect(await atp(g.b.id)).toBe(94);
      expect((await reservationsOf(order.id, 'fulfilled')).map((r) => r.qtyFulfilled).sort()).toEqual([2, 6]);
    });

    it('a short release is 409 insufficient_stock listing every short component, and nothing is reserved', async () => {
      const g = await ground(5, 10);
      const order = (await wo({ itemId: g.out.id, qtyPlanned: 5 })).body.data; // needs 9 of a, 30 of b
      const res = await act(order.id, 'release', 409);
      expect(res.body.error).toBe('insufficient_stock');
      expect(res.body.details).toEqual([
        expect.objectContaining({ field: 'components[0]', itemId: g.a.id, requested: 9, available: 5 }),
        expect.objectContaining({ field: 'components[1]', itemId: g.b.id, requested: 30, available: 10 }),
      ]);
      expect(await reservationsOf(order.id)).toEqual([]);
      expect((await t.get(`${W}/${order.id}`).expect(200)).body.data).toMatchObject({ status: 'draft', version: 1 });
    });

    it('lot- and expiry-tracked output gets its lot; completing needs an output location', async () => {
      const out = await item({ lotTracking: 'required', expiryTracking: 'required' });
      await activeBom({ itemId: out.id, components: [{ itemId: f.item.id, qtyPer: 1 }] });
      await adjust(t, { itemId: f.item.id, locationId: f.locations[0].id, qtyDelta: 10 });
      const order = (await t.post(W, { itemId: out.id, qtyPlanned: 3, facilityId: f.facility.id }).expect(201)).body.data;
      await act(order.id, 'release');
      await act(order.id, 'complete', 400, { lotNo: 'B-1', expiryDate: '2027-09-30' });
      await act(order.id, 'complete', 400, { outputLocationId: f.locations[1].id });
      await act(order.id, 'complete', 200, { outputLocationId: f.locations[1].id, lotNo: 'B-1', expiryDate: '2027-09-30' });
      const lot = await lotId(t, out.id, 'B-1');
      expect(await onHand(t, { itemId: out.id, locationId: f.locations[1].id, lotId: lot })).toBe(3);
    });

    it('cancel from draft and released frees the reservations; If-Match on actions', async () => {
      const g = await ground();
      const draft = (await wo({ itemId: g.out.id, qtyPlanned: 2 })).body.data;
      expect((await act(draft.id, 'cancel')).body.data.status).toBe('cancelled');
      const order = (await wo({ itemId: g.out.id, qtyPlanned: 2 })).body.data;
      await t.post(`${W}/${order.id}/release`).set('If-Match', '"7"').expect(412);
      await t.post(`${W}/${order.id}/release`).set('If-Match', '"1"').expect(200);
      expect(await atp(g.a.id)).toBe(96); // 3 × 2 / 2 × 1.1 = 3.3 → 4 reserved
      expect((await act(order.id, 'cancel')).body.data.status).toBe('cancelled');
      expect((await reservationsOf(order.id, 'cancelled')).length).toBe(2);
      expect(await atp(g.a.id)).toBe(100);
      await act(order.id, 'complete', 409);
    });

    it('two work orders released in parallel competing for one component never over-reserve', async () => {
      const g = await ground(12, 100); // each order of 2 needs 4 of a (3.3 → 4): at most 3 of 8 fit
      const orders = [];
      for (let i = 0; i < 8; i++) orders.push((await wo({ itemId: g.out.id, qtyPlanned: 2 })).body.data);
      const results = await Promise.all(orders.map((o) => t.post(`${W}/${o.id}/release`)));
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(3);
      expect(statuses.filter((s) => s === 409)).toHaveLength(5);
      const [held] = await ctx.db.query(
        `SELECT coalesce(sum(qty), 0)::float AS qty FROM reservations WHERE tenant_id = $1 AND item_id = $2 AND status IN ('open', 'allocated')`,
        [t.tenantId, g.a.id],
      );
      expect(held.qty).toBe(12);
      expect(await verifyLedger((sql, params) => ctx.db.query(sql, params), t.tenantId)).toEqual([]);
    });

    it('lists with filters; isolates tenants; checks permissions', async () => {
      const g = await ground(0, 0);
      const a = (await wo({ itemId: g.out.id, qtyPlanned: 1 })).body.data;
      expect((await t.get(`${W}?itemId=${g.out.id}`).expect(200)).body.data.map((w: { id: string }) => w.id)).toEqual([a.id]);
      expect((await t.get(`${W}?itemId=${g.out.id}&status=released`).expect(200)).body.count).toBe(0);
      expect((await t.get(`${W}?q=${a.woNo}`).expect(200)).body.count).toBe(1);

      const t2 = await newTenant(ctx);
      await t2.get(`${W}/${a.id}`).expect(404);
      await t2.post(`${W}/${a.id}/release`).expect(404);
      await t2.get(`${B}/${g.bom.id}`).expect(404);
      await t2.post(`${B}/${g.bom.id}/activate`).expect(404);
      const f2 = await inventoryFixture(t2);
      await t2.post(B, { itemId: f2.item.id, components: [{ itemId: g.a.id, qtyPer: 1 }] }).expect(404);
      expect((await t2.get(W).expect(200)).body.count).toBe(0);

      const token = async (permissions: string[]) => `Bearer ${await ctx.idp.token({ tenantId: t.tenantId, permissions })}`;
      const reader = await token(['production:read']);
      await ctx.http.get(W).set('Authorization', reader).expect(200);
      await ctx.http.post(`${W}/${a.id}/release`).set('Authorization', reader).expect(403);
      await ctx.http.post(B).set('Authorization', reader).send({}).expect(403);
      await ctx.http.get(B).set('Authorization', await token(['inventory:read'])).expect(403);
    });
  });
});
