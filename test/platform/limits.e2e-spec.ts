import { newTenant, startApp, Tenant, TestContext, PLATFORMS } from '../support/app';
import { adjust, InventoryFixture, inventoryFixture, newItem, facilityWithLocations, FacilityFixture } from '../support/fixtures';

/** CONTRACT §1 request limits: lines, children, serials, quantities; a 400 lists at most 50 details. */
describe.each(PLATFORMS)('Request limits on %s', (platform) => {
  let ctx: TestContext;
  let t: Tenant;
  let f: InventoryFixture;
  let dest: FacilityFixture;

  beforeAll(async () => {
    ctx = await startApp({ HTTP_PLATFORM: platform });
    t = await newTenant(ctx);
    f = await inventoryFixture(t);
    dest = await facilityWithLocations(t, 1);
  });
  afterAll(() => ctx.close());

  const transfer = (lines: unknown[]) => t.post('/v1/inventory/transfers', { fromFacilityId: f.facility.id, toFacilityId: dest.facility.id, lines });

  it('60,000 empty lines: 400 naming the limit, one detail, a small body (not a 500)', async () => {
    const res = await transfer(Array.from({ length: 60_000 }, () => ({})));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'validation_failed', details: [{ field: 'lines', message: 'must contain at most 1000 entries (it has 60000)' }] });
    expect(JSON.stringify(res.body).length).toBeLessThan(1000);
  });

  it('1,001 lines are refused, 1,000 are validated: details capped at 50, the message counts them all', async () => {
    expect((await transfer(Array.from({ length: 1001 }, () => ({}))).expect(400)).body.details).toEqual([
      { field: 'lines', message: 'must contain at most 1000 entries (it has 1001)' },
    ]);
    const res = await transfer(Array.from({ length: 1000 }, () => ({}))).expect(400);
    expect(res.body.details).toHaveLength(50);
    expect(res.body.details[0].field).toMatch(/^lines\[0\]\./);
    const total = Number(/\(and (\d+) more\)/.exec(res.body.message)![1]) + 1;
    expect(total).toBeGreaterThan(1000);
  });

  it('arrays anywhere hold at most 10,000 entries; nested DTO limits apply before validation', async () => {
    const serials = Array.from({ length: 10_001 }, (_, i) => `S-${i}`);
    const res = await transfer([{ itemId: f.item.id, qty: 1, fromLocationId: f.location.id, toLocationId: dest.location.id, serialNos: serials }]).expect(400);
    expect(res.body.details).toEqual([{ field: 'lines[0].serialNos', message: 'must contain at most 10000 entries (it has 10001)' }]);
    const identifiers = Array.from({ length: 101 }, (_, i) => ({ type: 'sku', value: `V-${i}` }));
    const item = await t.post('/v1/items', { itemNo: 'LIMITS-1', name: 'x', baseUomId: f.uom('EA'), identifiers }).expect(400);
    expect(item.body.details).toEqual([{ field: 'identifiers', message: 'must contain at most 100 entries (it has 101)' }]);
    expect(await ctx.db.query(`SELECT 1 FROM items WHERE tenant_id = $1 AND item_no = 'LIMITS-1'`, [t.tenantId])).toHaveLength(0);
  });

  it('quantities: at most 999,999,999.999999 in absolute value', async () => {
    const item = await newItem(t, f.uom('EA'));
    for (const qtyDelta of [1_000_000_000, -1_000_000_000, 10_000_000_000.5, 1e300]) {
      const res = await adjust(t, { itemId: item.id, locationId: f.location.id, qtyDelta }, 400);
      expect(res.body.details).toEqual([expect.objectContaining({ field: 'qtyDelta' })]);
    }
    const kg = await newItem(t, f.uom('KG'));
    await adjust(t, { itemId: kg.id, locationId: f.location.id, qtyDelta: 999_999_999.999 }, 201);
    await adjust(t, { itemId: item.id, locationId: f.location.id, qtyDelta: 999_999_999 }, 201);
    const [row] = await ctx.db.query(`SELECT qty_on_hand::text AS q FROM balances WHERE tenant_id = $1 AND item_id = $2`, [t.tenantId, kg.id]);
    expect(row.q).toBe('999999999.999000');
  });
});
