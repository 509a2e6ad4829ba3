import { newTenant, startApp, TestContext } from '../support/app';

describe('UOMs', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  it('seeds the contract UOMs for a new tenant', async () => {
    const t = await newTenant(ctx);
    const res = await t.get('/v1/uoms').expect(200);
    expect(res.body.count).toBe(8);
    const byCode = Object.fromEntries(res.body.data.map((u: { code: string; decimals: number }) => [u.code, u.decimals]));
    expect(byCode).toEqual({ EA: 0, BOX: 0, KG: 3, G: 2, L: 3, ML: 0, M: 3, CM: 1 });
  });

  it('creates a UOM, refuses a duplicate code and validates', async () => {
    const t = await newTenant(ctx);
    const created = await t.post('/v1/uoms', { code: 'pal', name: 'Pallet', decimals: 0 }).expect(201);
    expect(created.body.data).toEqual({ id: expect.any(String), code: 'PAL', name: 'Pallet', decimals: 0 });
    const dup = await t.post('/v1/uoms', { code: 'PAL', name: 'Again', decimals: 0 }).expect(409);
    expect(dup.body).toMatchObject({ error: 'duplicate', status: 409 });
    const bad = await t.post('/v1/uoms', { code: 'X', name: 'X', decimals: 7, extra: 1 }).expect(400);
    expect(bad.body.error).toBe('validation_failed');
    expect(bad.body.details).toEqual(
      expect.arrayContaining([
        { field: 'decimals', message: expect.any(String) },
        { field: 'extra', message: 'is not an allowed field' },
      ]),
    );
  });

  it('keeps tenants apart', async () => {
    const a = await newTenant(ctx);
    const b = await newTenant(ctx);
    await a.post('/v1/uoms', { code: 'ONLYA', name: 'A only', decimals: 0 }).expect(201);
    const res = await b.get('/v1/uoms?q=ONLYA').expect(200);
    expect(res.body).toMatchObject({ count: 0, data: [] });
    await b.post('/v1/uoms', { code: 'ONLYA', name: 'B too', decimals: 0 }).expect(201);
  });
});
