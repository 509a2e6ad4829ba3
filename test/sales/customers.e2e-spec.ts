import { newTenant, startApp, Tenant, TestContext } from '../support/app';
import { inventoryFixture, newCustomer } from '../support/fixtures';
import { auditFields, UUID } from '../support/matchers';

describe('Customers', () => {
  let ctx: TestContext;
  let t: Tenant;

  beforeAll(async () => {
    ctx = await startApp();
    t = await newTenant(ctx);
  });
  afterAll(() => ctx.close());

  const C = '/v1/sales/customers';

  it('creates, reads, lists and changes a customer; code unique per tenant', async () => {
    const res = await t.post(C, { code: 'NWT', name: 'Northwind Traders', email: 'orders@northwind.example', phone: '+1 555 0199', address: '2 Harbour Rd' }).expect(201);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(UUID), code: 'NWT', name: 'Northwind Traders', email: 'orders@northwind.example', phone: '+1 555 0199',
      address: '2 Harbour Rd', isActive: true, ...auditFields(t.token),
    });
    expect(res.headers.etag).toBe('"1"');
    const id = res.body.data.id;
    const read = await t.get(`${C}/${id}`).expect(200);
    expect(read.body.data).toEqual(res.body.data);
    expect(read.headers.etag).toBe('"1"');
    expect((await t.post(C, { code: 'NWT', name: 'Other' }).expect(409)).body).toMatchObject({ error: 'duplicate', message: expect.stringContaining('NWT') });
    const plain = (await t.post(C, { code: 'CONTOSO', name: 'Contoso Retail' }).expect(201)).body.data;
    expect(plain).toMatchObject({ email: null, phone: null, address: null, isActive: true });

    const changed = await t.patch(`${C}/${id}`, { name: 'Northwind Ltd', isActive: false, phone: null }).set('If-Match', '"1"').expect(200);
    expect(changed.body.data).toEqual({ ...res.body.data, name: 'Northwind Ltd', isActive: false, phone: null, version: 2, updatedAt: expect.any(String) });
    expect(changed.headers.etag).toBe('"2"');
    await t.patch(`${C}/${id}`, { name: 'stale' }).set('If-Match', '"1"').expect(412);
    expect((await t.patch(`${C}/${id}`, { code: 'CONTOSO' }).expect(409)).body).toMatchObject({ error: 'duplicate', message: expect.stringContaining('CONTOSO') });
    expect((await t.patch(`${C}/${id}`, { code: null }).expect(200)).body.data.code).not.toBeNull(); // null: left out (CONTRACT §1)
    await t.patch(`${C}/${id}`, { email: 'nope' }).expect(400);
    expect((await t.patch(`${C}/${id}`, {}).expect(200)).body.data.version).toBe(2);

    const codes = async (q: string) => {
      const body = (await t.get(`${C}${q}`).expect(200)).body;
      expect(body.count).toBe(body.data.length);
      return body.data.map((c: { code: string }) => c.code);
    };
    expect(await codes('')).toEqual(['CONTOSO', 'NWT']);
    expect(await codes('?isActive=false')).toEqual(['NWT']);
    expect(await codes('?isActive=true')).toEqual(['CONTOSO']);
    expect(await codes('?q=retail')).toEqual(['CONTOSO']);
    expect(await codes('?q=nwt')).toEqual(['NWT']);
    expect(await codes('?q=northwind&isActive=true')).toEqual([]);
    expect(await codes('?q=%25')).toEqual([]);
    expect((await t.get(`${C}?limit=1&offset=1`).expect(200)).body).toMatchObject({ count: 2, limit: 1, offset: 1, data: [{ code: 'NWT' }] });
    await t.get(`${C}?isActive=maybe`).expect(400);
  });

  it('refuses bad input with 400 and unknown ids with 404', async () => {
    await t.post(C, { name: 'No code' }).expect(400);
    await t.post(C, { code: '', name: 'Empty code' }).expect(400);
    await t.post(C, { code: 'X', name: 'X', email: 'not-an-email' }).expect(400);
    await t.post(C, { code: 'X', name: 'X', currency: 'EUR' }).expect(400);
    await t.get(`${C}/00000000-0000-4000-8000-000000000000`).expect(404);
    await t.get(`${C}/not-a-uuid`).expect(404);
    await t.patch(`${C}/00000000-0000-4000-8000-000000000000`, { name: 'x' }).expect(404);
  });

  it('isolates tenants: another tenant\'s customer does not exist, and its code is free', async () => {
    const mine = await newCustomer(t);
    const t2 = await newTenant(ctx);
    const f2 = await inventoryFixture(t2);
    await t2.get(`${C}/${mine.id}`).expect(404);
    await t2.patch(`${C}/${mine.id}`, { name: 'x' }).expect(404);
    expect((await t2.get(C).expect(200)).body.count).toBe(0);
    expect((await t2.get(`${C}?q=${mine.code}`).expect(200)).body.count).toBe(0);
    const ref = (await t2.post('/v1/sales/orders', { customerId: mine.id, facilityId: f2.facility.id }).expect(404)).body;
    expect(ref.details).toEqual([expect.objectContaining({ field: 'customerId' })]);
    await t2.post(C, { code: mine.code, name: 'same code, other tenant' }).expect(201);
  });

  it('permissions: sales:read for GET, sales:write for POST and PATCH', async () => {
    const mine = await newCustomer(t);
    const as = async (permissions: string[]) => {
      const token = await ctx.idp.token({ tenantId: t.tenantId, permissions });
      return (method: 'get' | 'post' | 'patch', url: string, body?: object) => ctx.http[method](url).set('Authorization', `Bearer ${token}`).send(body);
    };
    const reader = await as(['sales:read']);
    expect((await reader('get', C)).status).toBe(200);
    expect((await reader('get', `${C}/${mine.id}`)).status).toBe(200);
    expect((await reader('post', C, { code: 'R', name: 'R' })).status).toBe(403);
    expect((await reader('patch', `${C}/${mine.id}`, { name: 'R' })).status).toBe(403);
    const writer = await as(['sales:write']);
    expect((await writer('get', C)).status).toBe(403);
    expect((await writer('post', C, { code: `W-${Date.now()}`, name: 'W' })).status).toBe(201);
    expect((await writer('patch', `${C}/${mine.id}`, { name: 'W' })).status).toBe(200);
    const other = await as(['procurement:read', 'procurement:write', 'inventory:read']);
    expect((await other('get', C)).status).toBe(403);
    expect((await other('get', '/v1/sales/orders')).status).toBe(403);
  });
});
