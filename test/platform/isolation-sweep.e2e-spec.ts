import { newTenant, startApp, TestContext } from '../support/app';
import {
  countSessionIn, inventoryFixture, newCustomer, newSupplier, purchaseOrderIn, reservationIn, salesOrderIn, tenantWithStock, transferIn,
} from '../support/fixtures';

/**
 * Every route with an id, enumerated from the OpenAPI description the router generates, called by
 * another tenant with the ids of tenant A's records: GET is 404; a write is 404 (or 400 when its body is
 * refused first) — never a success, a 409 or a 412, which would show that the record was found.
 */
describe('isolation sweep over every route with an id', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  it('another tenant\'s ids are not found on any route', async () => {
    const a = await tenantWithStock(ctx, { qty: 50 });
    const t = a.t;
    const f = a;
    const ids: Record<string, string> = {
      items: f.item.id,
      facilities: f.facility.id,
      locations: f.location.id,
      reservations: (await reservationIn(t, f, 'open')).id,
      transfers: (await transferIn(t, f, 'draft')).id,
      'count-sessions': (await countSessionIn(t, f, 'open')).id,
      policies: (await t.post('/v1/inventory/policies', { itemId: f.item.id, facilityId: f.facility.id, minQty: 1, maxQty: 5 }).expect(201)).body.data.id,
      transactions: (await t.get('/v1/inventory/transactions?limit=1').expect(200)).body.data[0].id,
      suppliers: (await newSupplier(t)).id,
      'purchase-orders': (await purchaseOrderIn(t, 'approved', { facilityId: f.facility.id, itemId: f.item.id })).id,
      requisitions: (await t.post('/v1/procurement/requisitions', { facilityId: f.facility.id }).expect(201)).body.data.id,
      customers: (await newCustomer(t)).id,
      orders: (await salesOrderIn(t, 'open', { facilityId: f.facility.id, itemId: f.item.id })).id,
      boms: (await t.post('/v1/production/boms', { itemId: (await inventoryFixture(t)).item.id, components: [{ itemId: f.item.id, qtyPer: 1 }] }).expect(201)).body.data.id,
    };
    ids['work-orders'] = ids.boms; // any id of A: no work order of B can match it

    const b = await newTenant(ctx);
    const doc = (await ctx.http.get('/openapi.json').expect(200)).body as { paths: Record<string, Record<string, unknown>> };
    const calls: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (!path.startsWith('/v1/') || !path.includes('{')) continue;
      // each {param} takes the id of A's record of the collection just before it
      const url = path.replace(/\/([^/]+)\/\{[^}]+\}/g, (_, collection: string) => {
        const id = ids[collection];
        if (!id) throw new Error(`no record of A for ${collection} in ${path}`);
        return `/${collection}/${id}`;
      });
      for (const method of Object.keys(ops)) {
        const res = await (ctx.http as unknown as Record<string, (u: string) => { set(h: string, v: string): { send(b: object): Promise<{ status: number; body: unknown }> } }>)[method](url)
          .set('Authorization', b.auth.Authorization).send({});
        calls.push(`${method.toUpperCase()} ${path} → ${res.status}`);
        if (method === 'get') expect({ call: `${method} ${path}`, status: res.status }).toEqual({ call: `${method} ${path}`, status: 404 });
        else expect({ call: `${method} ${path}`, status: [400, 404].includes(res.status) }).toEqual({ call: `${method} ${path}`, status: true });
        expect(JSON.stringify(res.body)).not.toContain(a.t.tenantId);
      }
    }
    expect(calls.length).toBeGreaterThan(40);

    // Every list B can read shows none of A's records.
    const lists = Object.entries(doc.paths).filter(([path, ops]) => path.startsWith('/v1/') && !path.includes('{') && 'get' in ops).map(([path]) => path);
    expect(lists.length).toBeGreaterThan(15);
    for (const path of lists) {
      const res = await ctx.http.get(path).set('Authorization', b.auth.Authorization);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      for (const id of Object.values(ids)) expect({ path, leaks: JSON.stringify(res.body).includes(id) }).toEqual({ path, leaks: false });
    }
  }, 120_000);
});
