import { randomUUID } from 'node:crypto';
import { ALL, newTenant, startApp, Tenant, TestContext } from '../support/app';
import { ISO_MS, subOf } from '../support/matchers';


interface Node {
  id: string;
  code: string;
  path: string;
  parentId: string | null;
  children: Node[];
}

/** [path, children…] of a tree: compact enough to compare whole trees. */
const shape = (nodes: Node[]): unknown[] => nodes.map((n) => (n.children.length ? [n.path, shape(n.children)] : n.path));

describe('Locations', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  const facility = async (t: Tenant, code = 'WH') => (await t.post('/v1/facilities', { code, name: code }).expect(201)).body.data.id as string;
  const location = async (t: Tenant, facilityId: string, body: object) =>
    (await t.post(`/v1/facilities/${facilityId}/locations`, body).expect(201)).body.data;

  it('creates a location with every field and returns the full record', async () => {
    const t = await newTenant(ctx);
    const f = await facility(t);
    const zone = await location(t, f, { code: 'A', name: 'Zone A', type: 'zone' });
    const res = await t.post(`/v1/facilities/${f}/locations`, { code: 'A-01', name: 'Aisle 1', type: 'aisle', parentId: zone.id, isActive: false }).expect(201);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      facilityId: f,
      parentId: zone.id,
      code: 'A-01',
      name: 'Aisle 1',
      type: 'aisle',
      path: 'A/A-01',
      isActive: false,
      version: 1,
      createdBy: subOf(t.token),
      updatedBy: subOf(t.token),
      createdAt: expect.stringMatching(ISO_MS),
      updatedAt: expect.stringMatching(ISO_MS),
      children: [],
    });
    expect(res.headers.etag).toBe('"1"');
    expect(zone).toMatchObject({ parentId: null, path: 'A', type: 'zone', isActive: true });

    const bin = await location(t, f, { code: 'BIN-9', name: 'Loose bin' });
    expect(bin).toMatchObject({ type: 'bin', parentId: null, path: 'BIN-9', isActive: true });
  });

  it('returns the tree three levels deep with paths, siblings ordered by code', async () => {
    const t = await newTenant(ctx);
    const f = await facility(t);
    const b = await location(t, f, { code: 'B', name: 'Zone B', type: 'zone' });
    const a = await location(t, f, { code: 'A', name: 'Zone A', type: 'zone' });
    const a2 = await location(t, f, { code: 'A-02', name: 'Aisle 2', type: 'aisle', parentId: a.id });
    const a1 = await location(t, f, { code: 'A-01', name: 'Aisle 1', type: 'aisle', parentId: a.id });
    const a13 = await location(t, f, { code: 'A-01-03', name: 'Bin 3', parentId: a1.id });
    const a11 = await location(t, f, { code: 'A-01-01', name: 'Bin 1', parentId: a1.id });
    await location(t, f, { code: 'B-01', name: 'B aisle', type: 'aisle', parentId: b.id });
    expect(a13.path).toBe('A/A-01/A-01-03');

    const res = await t.get(`/v1/facilities/${f}/locations`).expect(200);
    expect(Object.keys(res.body)).toEqual(['data']);
    expect(shape(res.body.data)).toEqual([
      ['A', [['A/A-01', ['A/A-01/A-01-01', 'A/A-01/A-01-03']], 'A/A-02']],
      ['B', ['B/B-01']],
    ]);
    const [rootA] = res.body.data;
    expect(rootA.children[0]).toEqual({ ...a1, children: [a11, a13] });
    expect(rootA.children[1]).toEqual(a2);
    expect(rootA.children[0].children[1]).toEqual({ ...a13, facilityId: f, parentId: a1.id, type: 'bin' });

    const sub = await t.get(`/v1/facilities/${f}/locations/${a1.id}`).expect(200);
    expect(sub.body.data).toEqual({ ...a1, children: [a11, a13] });
    expect(sub.headers.etag).toBe('"1"');
    expect((await t.get(`/v1/facilities/${f}/locations/${a13.id}`).expect(200)).body.data).toEqual(a13);
  });

  it('returns an empty tree for a facility without locations and 404 for an unknown facility', async () => {
    const t = await newTenant(ctx);
    const f = await facility(t);
    expect((await t.get(`/v1/facilities/${f}/locations`).expect(200)).body).toEqual({ data: [] });
    const unknown = await t.get(`/v1/facilities/${randomUUID()}/locations`).expect(404);
    expect(unknown.body).toEqual({ error: 'not_found', message: 'Facility not found', status: 404 });
    await t.post(`/v1/facilities/${randomUUID()}/locations`, { code: 'X', name: 'x' }).expect(404);
    await t.get(`/v1/facilities/not-a-uuid/locations`).expect(404);
    await t.post(`/v1/facilities/not-a-uuid/locations`, { code: 'X', name: 'x' }).expect(404);
    await t.get(`/v1/facilities/${f}/locations/${randomUUID()}`).expect(404);
    await t.get(`/v1/facilities/${f}/locations/xyz`).expect(404);
    await t.patch(`/v1/facilities/${f}/locations/xyz`, { name: 'x' }).expect(404);
  });

  it('keeps codes unique within a facility only', async () => {
    const t = await newTenant(ctx);
    const f1 = await facility(t, 'F1');
    const f2 = await facility(t, 'F2');
    const parent = await location(t, f1, { code: 'P', name: 'parent', type: 'zone' });
    await location(t, f1, { code: 'X-1', name: 'x' });
    const dup = await t.post(`/v1/facilities/${f1}/locations`, { code: 'X-1', name: 'again' }).expect(409);
    expect(dup.body).toEqual({ error: 'duplicate', status: 409, message: 'A location with code "X-1" already exists in this facility' });
    // under another parent it is still the same facility
    await t.post(`/v1/facilities/${f1}/locations`, { code: 'X-1', name: 'nested', parentId: parent.id }).expect(409);
    const other = await location(t, f2, { code: 'X-1', name: 'other facility' });
    expect(other).toMatchObject({ facilityId: f2, path: 'X-1' });
    expect(shape((await t.get(`/v1/facilities/${f1}/locations`).expect(200)).body.data)).toEqual(['P', 'X-1']);
  });

  it('checks the parent: unknown → 404, another facility\'s → 400, malformed → 400', async () => {
    const t = await newTenant(ctx);
    const f1 = await facility(t, 'F1');
    const f2 = await facility(t, 'F2');
    const foreign = await location(t, f2, { code: 'Z', name: 'in F2', type: 'zone' });

    const unknown = await t.post(`/v1/facilities/${f1}/locations`, { code: 'C', name: 'c', parentId: randomUUID() }).expect(404);
    expect(unknown.body).toMatchObject({ error: 'not_found', details: [{ field: 'parentId' }] });
    expect(unknown.body.message).toContain('parentId');
    const other = await t.post(`/v1/facilities/${f1}/locations`, { code: 'C', name: 'c', parentId: foreign.id }).expect(400);
    expect(other.body).toMatchObject({ error: 'validation_failed', details: [{ field: 'parentId', message: expect.any(String) }] });
    const bad = await t.post(`/v1/facilities/${f1}/locations`, { code: 'C', name: 'c', parentId: 'Z' }).expect(400);
    expect(bad.body.details).toEqual([{ field: 'parentId', message: expect.any(String) }]);
    expect((await t.get(`/v1/facilities/${f1}/locations`).expect(200)).body.data).toEqual([]);
    // a location is only reachable under its own facility
    await t.get(`/v1/facilities/${f1}/locations/${foreign.id}`).expect(404);
    await t.patch(`/v1/facilities/${f1}/locations/${foreign.id}`, { name: 'x' }).expect(404);
    // null parent = root
    expect(await location(t, f1, { code: 'ROOT', name: 'r', parentId: null })).toMatchObject({ parentId: null, path: 'ROOT' });
  });

  it('validates the body', async () => {
    const t = await newTenant(ctx);
    const f = await facility(t);
    const res = await t.post(`/v1/facilities/${f}/locations`, { path: 'A/B' }).expect(400);
    expect(res.body.details).toEqual(
      expect.arrayContaining([
        { field: 'code', message: expect.any(String) },
        { field: 'name', message: expect.any(String) },
        { field: 'path', message: 'is not an allowed field' },
      ]),
    );
    for (const [patch, field] of [
      [{ code: 'A/B' }, 'code'],
      [{ code: '' }, 'code'],
      [{ code: 'x'.repeat(65) }, 'code'],
      [{ type: 'shelf' }, 'type'],
      [{ isActive: 1 }, 'isActive'],
    ] as const) {
      const bad = await t.post(`/v1/facilities/${f}/locations`, { code: 'OK', name: 'n', ...patch }).expect(400);
      expect(bad.body.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    for (const type of ['zone', 'aisle', 'rack', 'bin', 'receiving', 'shipping', 'production', 'staging']) {
      await location(t, f, { code: `T-${type}`, name: type, type });
    }
  });

  it('updates name, type and isActive only, with version, ETag and If-Match', async () => {
    const t = await newTenant(ctx);
    const f = await facility(t);
    const zone = await location(t, f, { code: 'A', name: 'Zone', type: 'zone' });
    const bin = await location(t, f, { code: 'A-1', name: 'Bin', parentId: zone.id });

    // Changed by another user: updatedBy is the token's sub, createdBy stays (in the tree too, below).
    const editor = `Bearer ${await ctx.idp.token({ tenantId: t.tenantId, permissions: ALL, sub: 'editor-1' })}`;
    // The database's clock just before the change: updatedAt is at least this (equal milliseconds allowed).
    const dbBefore = ((await ctx.db.query('SELECT now() AS t')) as Array<{ t: Date }>)[0].t.getTime();
    const res = await ctx.http
      .patch(`/v1/facilities/${f}/locations/${zone.id}`)
      .set({ Authorization: editor, 'If-Match': '"1"' })
      .send({ name: 'Zone A', type: 'staging', isActive: false })
      .expect(200);
    expect(res.body.data).toEqual({
      ...zone,
      name: 'Zone A',
      type: 'staging',
      isActive: false,
      version: 2,
      createdBy: subOf(t.token),
      updatedBy: 'editor-1',
      updatedAt: expect.stringMatching(ISO_MS),
      children: [bin],
    });
    expect(bin).toMatchObject({ createdBy: subOf(t.token), updatedBy: subOf(t.token) });
    expect(new Date(res.body.data.updatedAt).getTime()).toBeGreaterThanOrEqual(Math.max(dbBefore, new Date(zone.updatedAt).getTime()));
    expect(res.headers.etag).toBe('"2"');

    const stale = await t.patch(`/v1/facilities/${f}/locations/${zone.id}`, { name: 'late' }).set('If-Match', '"1"').expect(412);
    expect(stale.body).toMatchObject({ error: 'version_conflict', status: 412 });
    for (const fixed of [{ code: 'B' }, { parentId: null }, { path: 'B' }, { facilityId: randomUUID() }]) {
      const refused = await t.patch(`/v1/facilities/${f}/locations/${bin.id}`, fixed).expect(400);
      expect(refused.body.details).toEqual([{ field: Object.keys(fixed)[0], message: 'is not an allowed field' }]);
    }
    // null in an optional field is the field left out (CONTRACT §1): nothing changes.
    expect((await t.patch(`/v1/facilities/${f}/locations/${bin.id}`, { name: null }).expect(200)).body.data.name).toBe(bin.name);
    const tree = (await t.get(`/v1/facilities/${f}/locations`).expect(200)).body.data;
    expect(tree).toEqual([{ ...res.body.data, children: [bin] }]);
  });

  it('hides another tenant\'s facilities and locations', async () => {
    const a = await newTenant(ctx);
    const b = await newTenant(ctx);
    const fa = await facility(a);
    const la = await location(a, fa, { code: 'A', name: 'a' });
    const fb = await facility(b);

    await b.get(`/v1/facilities/${fa}/locations`).expect(404);
    await b.post(`/v1/facilities/${fa}/locations`, { code: 'B', name: 'b' }).expect(404);
    await b.get(`/v1/facilities/${fa}/locations/${la.id}`).expect(404);
    await b.patch(`/v1/facilities/${fa}/locations/${la.id}`, { name: 'stolen' }).expect(404);
    const foreignParent = await b.post(`/v1/facilities/${fb}/locations`, { code: 'B', name: 'b', parentId: la.id }).expect(404);
    expect(foreignParent.body.details).toEqual([{ field: 'parentId', message: 'not found' }]);
    expect((await b.get(`/v1/facilities/${fb}/locations`).expect(200)).body.data).toEqual([]);
    expect((await a.get(`/v1/facilities/${fa}/locations`).expect(200)).body.data).toEqual([la]);
  });

  it('needs catalog:read to read and catalog:write to write', async () => {
    const owner = await newTenant(ctx);
    const f = await facility(owner);
    const l = await location(owner, f, { code: 'A', name: 'a' });
    const reader = { Authorization: `Bearer ${await ctx.idp.token({ tenantId: owner.tenantId, permissions: ['catalog:read'] })}` };
    await ctx.http.get(`/v1/facilities/${f}/locations`).set(reader).expect(200);
    await ctx.http.get(`/v1/facilities/${f}/locations/${l.id}`).set(reader).expect(200);
    await ctx.http.post(`/v1/facilities/${f}/locations`).set(reader).send({ code: 'B', name: 'b' }).expect(403);
    await ctx.http.patch(`/v1/facilities/${f}/locations/${l.id}`).set(reader).send({ name: 'b' }).expect(403);
    const none = { Authorization: `Bearer ${await ctx.idp.token({ tenantId: owner.tenantId, permissions: ['catalog:write'] })}` };
    await ctx.http.get(`/v1/facilities/${f}/locations`).set(none).expect(403);
    expect((await owner.get(`/v1/facilities/${f}/locations`).expect(200)).body.data).toEqual([l]);
  });

  it('documents that code and parent are fixed', async () => {
    const doc = (await ctx.http.get('/openapi.json').expect(200)).body;
    const path = doc.paths['/v1/facilities/{facilityId}/locations/{locationId}'];
    expect(path.patch.description).toMatch(/code and parent are fixed/);
    expect(Object.keys(doc.components.schemas.UpdateLocationDto.properties).sort()).toEqual(['isActive', 'name', 'type']);
    expect(doc.components.schemas.CreateLocationDto.required).toEqual(expect.arrayContaining(['code', 'name']));
  });
});
