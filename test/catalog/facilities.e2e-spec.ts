import { randomUUID } from 'node:crypto';
import { ALL, newTenant, startApp, TestContext } from '../support/app';
import { ISO_MS, subOf } from '../support/matchers';


describe('Facilities', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  it('creates a facility with every field and reads back the same record by id and in the list', async () => {
    const t = await newTenant(ctx);
    const created = await t.post('/v1/facilities', { code: 'STORE-1', name: 'High Street', type: 'store', address: '1 High St', isActive: false }).expect(201);
    const facility = created.body.data;
    expect(facility).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      code: 'STORE-1',
      name: 'High Street',
      type: 'store',
      address: '1 High St',
      isActive: false,
      version: 1,
      createdBy: subOf(t.token),
      updatedBy: subOf(t.token),
      createdAt: expect.stringMatching(ISO_MS),
      updatedAt: expect.stringMatching(ISO_MS),
    });
    expect(created.headers.etag).toBe('"1"');

    const got = await t.get(`/v1/facilities/${facility.id}`).expect(200);
    expect(got.body).toEqual({ data: facility });
    expect(got.headers.etag).toBe('"1"');
    expect((await t.get('/v1/facilities').expect(200)).body).toEqual({ data: [facility], count: 1, limit: 50, offset: 0, nextCursor: null });
  });

  it('applies the defaults', async () => {
    const t = await newTenant(ctx);
    const res = await t.post('/v1/facilities', { code: 'WH', name: 'Main' }).expect(201);
    expect(res.body.data).toMatchObject({ code: 'WH', name: 'Main', type: 'warehouse', address: null, isActive: true, version: 1 });
  });

  it('validates the body', async () => {
    const t = await newTenant(ctx);
    const empty = await t.post('/v1/facilities', { colour: 'red' }).expect(400);
    expect(empty.body).toMatchObject({ error: 'validation_failed', status: 400 });
    expect(empty.body.details).toEqual(
      expect.arrayContaining([
        { field: 'code', message: expect.any(String) },
        { field: 'name', message: expect.any(String) },
        { field: 'colour', message: 'is not an allowed field' },
      ]),
    );
    for (const [patch, field] of [
      [{ type: 'depot' }, 'type'],
      [{ address: 'x'.repeat(501) }, 'address'],
      [{ address: 5 }, 'address'],
      [{ code: 'x'.repeat(65) }, 'code'],
      [{ name: '' }, 'name'],
      [{ isActive: 'no' }, 'isActive'],
    ] as const) {
      const res = await t.post('/v1/facilities', { code: 'V', name: 'V', ...patch }).expect(400);
      expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    await t.post('/v1/facilities', { code: 'V', name: 'V', address: 'x'.repeat(500), type: 'plant' }).expect(201);
    expect((await t.get('/v1/facilities').expect(200)).body.count).toBe(1);
  });

  it('refuses a duplicate code within a tenant only', async () => {
    const a = await newTenant(ctx);
    await a.post('/v1/facilities', { code: 'DUP', name: 'one' }).expect(201);
    const dup = await a.post('/v1/facilities', { code: 'DUP', name: 'two' }).expect(409);
    expect(dup.body).toMatchObject({ error: 'duplicate', status: 409 });
    expect(dup.body.message).toBe('A facility with code "DUP" already exists');
    const b = await newTenant(ctx);
    await b.post('/v1/facilities', { code: 'DUP', name: 'other tenant' }).expect(201);
  });

  it('updates fields, bumps the version, honours If-Match and refuses a taken code', async () => {
    const t = await newTenant(ctx);
    await t.post('/v1/facilities', { code: 'TAKEN', name: 'x' }).expect(201);
    const f = (await t.post('/v1/facilities', { code: 'F', name: 'Before', address: 'Somewhere' }).expect(201)).body.data;

    // Changed by another user: updatedBy is the token's sub, createdBy stays.
    const editor = `Bearer ${await ctx.idp.token({ tenantId: t.tenantId, permissions: ALL, sub: 'editor-1' })}`;
    // The database's clock just before the change: updatedAt is at least this (equal milliseconds allowed).
    const dbBefore = ((await ctx.db.query('SELECT now() AS t')) as Array<{ t: Date }>)[0].t.getTime();
    const res = await ctx.http
      .patch(`/v1/facilities/${f.id}`)
      .set({ Authorization: editor, 'If-Match': '"1"' })
      .send({ name: 'After', type: 'plant', address: null, isActive: false, code: 'F2' })
      .expect(200);
    expect(res.body.data).toEqual({
      ...f,
      code: 'F2',
      name: 'After',
      type: 'plant',
      address: null,
      isActive: false,
      version: 2,
      createdBy: subOf(t.token),
      updatedBy: 'editor-1',
      updatedAt: expect.stringMatching(ISO_MS),
    });
    expect(new Date(res.body.data.updatedAt).getTime()).toBeGreaterThanOrEqual(Math.max(dbBefore, new Date(f.updatedAt).getTime()));
    expect(res.headers.etag).toBe('"2"');
    expect((await t.get(`/v1/facilities/${f.id}`).expect(200)).body.data).toEqual(res.body.data);

    const stale = await t.patch(`/v1/facilities/${f.id}`, { name: 'Late' }).set('If-Match', '"1"').expect(412);
    expect(stale.body).toMatchObject({ error: 'version_conflict', status: 412 });
    expect((await t.patch(`/v1/facilities/${f.id}`, { code: 'TAKEN' }).expect(409)).body.error).toBe('duplicate');
    // null in an optional field is the field left out (CONTRACT §1): nothing changes.
    const before = (await t.get(`/v1/facilities/${f.id}`).expect(200)).body.data;
    const nulls = await t.patch(`/v1/facilities/${f.id}`, { name: null, code: null }).expect(200);
    expect(nulls.body.data).toMatchObject({ name: before.name, code: before.code });
    await t.patch(`/v1/facilities/${f.id}`, { id: randomUUID() }).expect(400);

    const [row] = await ctx.db.query(`SELECT version, name, updated_by FROM facilities WHERE id = $1`, [f.id]);
    expect(row).toMatchObject({ version: 2, name: 'After' });
  });

  it('returns 404 for an unknown or malformed id', async () => {
    const t = await newTenant(ctx);
    const res = await t.get(`/v1/facilities/${randomUUID()}`).expect(404);
    expect(res.body).toEqual({ error: 'not_found', message: 'Facility not found', status: 404 });
    await t.patch(`/v1/facilities/${randomUUID()}`, { name: 'x' }).expect(404);
    for (const bad of ['nope', '00000000-0000-0000-0000-00000000000g', '1']) {
      expect((await t.get(`/v1/facilities/${bad}`).expect(404)).body.error).toBe('not_found');
      await t.patch(`/v1/facilities/${bad}`, { name: 'x' }).expect(404);
    }
  });

  it('pages newest first, searches code and name, filters type and isActive', async () => {
    const t = await newTenant(ctx);
    const ids: string[] = [];
    for (const [code, name, type, isActive] of [
      ['NORTH', 'North depot', 'warehouse', true],
      ['SHOP-1', 'City shop', 'store', true],
      ['PL-1', 'Northern plant', 'plant', false],
      ['SHOP-2', 'Mall 50% off', 'store', true],
    ] as const) {
      ids.push((await t.post('/v1/facilities', { code, name, type, isActive }).expect(201)).body.data.id);
    }
    const pages = [];
    for (const offset of [0, 3]) {
      const res = await t.get(`/v1/facilities?limit=3&offset=${offset}`).expect(200);
      expect(res.body).toMatchObject({ count: 4, limit: 3, offset });
      pages.push(...res.body.data.map((f: { id: string }) => f.id));
    }
    expect(pages).toEqual([...ids].reverse());
    for (const q of ['limit=0', 'limit=501', 'limit=abc', 'offset=-1']) await t.get(`/v1/facilities?${q}`).expect(400);

    const codes = async (query: string) => (await t.get(`/v1/facilities?${query}`).expect(200)).body.data.map((f: { code: string }) => f.code).sort();
    expect(await codes('q=north')).toEqual(['NORTH', 'PL-1']);
    expect(await codes('q=shop')).toEqual(['SHOP-1', 'SHOP-2']);
    expect(await codes(`q=${encodeURIComponent('0%')}`)).toEqual(['SHOP-2']);
    expect(await codes('type=store')).toEqual(['SHOP-1', 'SHOP-2']);
    expect(await codes('isActive=false')).toEqual(['PL-1']);
    await t.get('/v1/facilities?type=depot').expect(400);
  });

  it('hides another tenant\'s facilities', async () => {
    const a = await newTenant(ctx);
    const b = await newTenant(ctx);
    const f = (await a.post('/v1/facilities', { code: 'A-ONLY', name: 'A' }).expect(201)).body.data;
    await b.get(`/v1/facilities/${f.id}`).expect(404);
    await b.patch(`/v1/facilities/${f.id}`, { name: 'stolen' }).expect(404);
    expect((await b.get('/v1/facilities').expect(200)).body).toMatchObject({ data: [], count: 0 });
    expect((await a.get(`/v1/facilities/${f.id}`).expect(200)).body.data).toEqual(f);
  });

  it('needs catalog:read to read and catalog:write to write', async () => {
    const owner = await newTenant(ctx);
    const f = (await owner.post('/v1/facilities', { code: 'P', name: 'p' }).expect(201)).body.data;
    const reader = { Authorization: `Bearer ${await ctx.idp.token({ tenantId: owner.tenantId, permissions: ['catalog:read'] })}` };
    await ctx.http.get('/v1/facilities').set(reader).expect(200);
    await ctx.http.get(`/v1/facilities/${f.id}`).set(reader).expect(200);
    expect((await ctx.http.post('/v1/facilities').set(reader).send({ code: 'Q', name: 'q' }).expect(403)).body.error).toBe('forbidden');
    await ctx.http.patch(`/v1/facilities/${f.id}`).set(reader).send({ name: 'q' }).expect(403);
    const writerOnly = { Authorization: `Bearer ${await ctx.idp.token({ tenantId: owner.tenantId, permissions: ['catalog:write'] })}` };
    await ctx.http.get('/v1/facilities').set(writerOnly).expect(403);
    expect((await owner.get(`/v1/facilities/${f.id}`).expect(200)).body.data).toEqual(f);
  });
});
