import { randomUUID } from 'node:crypto';
import { adjust, inventoryFixture } from '../support/fixtures';
import { newTenant, startApp, Tenant, TestContext } from '../support/app';

describe('Idempotency-Key (CONTRACT §1)', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  const post = (t: Tenant, key: string, body: object, url = '/v1/uoms') =>
    ctx.http.post(url).set(t.auth).set('Idempotency-Key', key).send(body);
  const uomRows = async (t: Tenant, code: string) =>
    (await ctx.db.query(`SELECT id FROM uoms WHERE tenant_id = $1 AND code = $2`, [t.tenantId, code])) as Array<{ id: string }>;
  const onHand = async (t: Tenant, itemId: string, locationId: string): Promise<number> =>
    (await t.get(`/v1/inventory/balances?itemId=${itemId}&locationId=${locationId}`).expect(200)).body.data[0]?.qtyOnHand ?? 0;

  it('a repeat returns the stored 201 response without executing again', async () => {
    const t = await newTenant(ctx);
    const key = randomUUID();
    const first = await post(t, key, { code: 'IDEM', name: 'Idempotent', decimals: 1 }).expect(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await post(t, key, { code: 'IDEM', name: 'Idempotent', decimals: 1 }).expect(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await uomRows(t, 'IDEM')).toEqual([{ id: first.body.data.id }]);
    // the same body with its fields in another order is the same request
    const reordered = await post(t, key, { decimals: 1, name: 'Idempotent', code: 'IDEM' }).expect(201);
    expect(reordered.body).toEqual(first.body);
  });

  it('without a key, the same request executes again (here: a duplicate)', async () => {
    const t = await newTenant(ctx);
    await t.post('/v1/uoms', { code: 'NOKEY', name: 'No key', decimals: 0 }).expect(201);
    await t.post('/v1/uoms', { code: 'NOKEY', name: 'No key', decimals: 0 }).expect(409);
  });

  it('the same key with a different body → 409 idempotency_conflict, nothing executed', async () => {
    const t = await newTenant(ctx);
    const key = randomUUID();
    await post(t, key, { code: 'ONE', name: 'One', decimals: 0 }).expect(201);
    const res = await post(t, key, { code: 'TWO', name: 'Two', decimals: 0 }).expect(409);
    expect(res.body).toEqual({ error: 'idempotency_conflict', message: expect.any(String), status: 409 });
    expect(await uomRows(t, 'TWO')).toEqual([]);
  });

  it('the same key on another path is a different request → 409', async () => {
    const t = await newTenant(ctx);
    const key = randomUUID();
    await post(t, key, { code: 'PATH', name: 'Path', decimals: 0 }).expect(201);
    const res = await post(t, key, { code: 'PATH', name: 'Path', decimals: 0 }, '/v1/uoms?x=1').expect(409);
    expect(res.body.error).toBe('idempotency_conflict');
  });

  it('keys are per tenant', async () => {
    const a = await newTenant(ctx);
    const b = await newTenant(ctx);
    const key = randomUUID();
    const ra = await post(a, key, { code: 'SHARED', name: 'Shared', decimals: 0 }).expect(201);
    const rb = await post(b, key, { code: 'SHARED', name: 'Shared', decimals: 0 }).expect(201);
    expect(rb.body.data.id).not.toBe(ra.body.data.id);
    expect(rb.headers['idempotent-replayed']).toBeUndefined();
    // and a different body in the other tenant is no conflict either
    await post(b, randomUUID(), { code: 'X', name: 'X', decimals: 0 }).expect(201);
    const other = await post(a, key, { code: 'SHARED', name: 'Shared', decimals: 0 }).expect(201);
    expect(other.body).toEqual(ra.body);
  });

  it('10 parallel requests with one key: one execution, ten identical responses', async () => {
    const t = await newTenant(ctx);
    await t.get('/v1/uoms').expect(200); // provisioned, so the race is on the key alone
    const key = randomUUID();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => post(t, key, { code: 'PAR', name: 'Parallel', decimals: 2 })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(201));
    const bodies = new Set(responses.map((r) => JSON.stringify(r.body)));
    expect(bodies.size).toBe(1);
    expect(responses.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(9);
    expect(await uomRows(t, 'PAR')).toEqual([{ id: responses[0].body.data.id }]);
  });

  it('a stored 409 is replayed without executing again, even once the request would succeed', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const key = randomUUID();
    const take = { itemId: f.item.id, locationId: f.location.id, qtyDelta: -5, reason: 'pick' };
    const first = await post(t, key, take, '/v1/inventory/adjustments').expect(409);
    expect(first.body).toMatchObject({ error: 'insufficient_stock', status: 409 });
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 10 });
    const again = await post(t, key, take, '/v1/inventory/adjustments').expect(409);
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await onHand(t, f.item.id, f.location.id)).toBe(10);
    // the key is taken by the failed request: another request with it is a conflict
    const other = await post(t, key, { ...take, qtyDelta: -4 }, '/v1/inventory/adjustments').expect(409);
    expect(other.body.error).toBe('idempotency_conflict');
    expect(await onHand(t, f.item.id, f.location.id)).toBe(10);
  });

  it('a 400 validation error is stored and replayed with the same body', async () => {
    const t = await newTenant(ctx);
    const key = randomUUID();
    const first = await post(t, key, { code: 'FAIL', name: 'Fail', decimals: 9 }).expect(400);
    expect(first.body).toMatchObject({ error: 'validation_failed', details: [expect.objectContaining({ field: 'decimals' })] });
    const again = await post(t, key, { code: 'FAIL', name: 'Fail', decimals: 9 }).expect(400);
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const [row] = await ctx.db.query(`SELECT status_code, response FROM idempotency_keys WHERE tenant_id = $1 AND key = $2`, [t.tenantId, key]);
    expect(row).toEqual({ status_code: 400, response: first.body });
    // a corrected request needs a new key
    await post(t, key, { code: 'FAIL', name: 'Fail', decimals: 2 }).expect(409);
    expect(await uomRows(t, 'FAIL')).toEqual([]);
  });

  it('a failed request is stored once when repeated in parallel', async () => {
    const t = await newTenant(ctx);
    await t.post('/v1/uoms', { code: 'TAKEN', name: 'Taken', decimals: 0 }).expect(201);
    const key = randomUUID();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => post(t, key, { code: 'TAKEN', name: 'Taken', decimals: 0 })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(409));
    expect(new Set(responses.map((r) => r.text)).size).toBe(1);
    expect(responses[0].body.error).toBe('duplicate');
    const rows = await ctx.db.query(`SELECT status_code, response FROM idempotency_keys WHERE tenant_id = $1`, [t.tenantId]);
    expect(rows).toEqual([{ status_code: 409, response: responses[0].body }]);
  });

  it('replays the original bytes: same field order, timestamps as sent', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const key = randomUUID();
    const body = { itemId: f.item.id, locationId: f.location.id, qtyDelta: 3, reason: 'opening stock' };
    const first = await post(t, key, body, '/v1/inventory/adjustments').expect(201);
    expect(first.body.data.postedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const again = await post(t, key, body, '/v1/inventory/adjustments').expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    expect(await onHand(t, f.item.id, f.location.id)).toBe(3);
  });

  it('stores the response with the effect, in one transaction', async () => {
    const t = await newTenant(ctx);
    const key = randomUUID();
    const res = await post(t, key, { code: 'STORED', name: 'Stored', decimals: 0 }).expect(201);
    const [row] = await ctx.db.query(`SELECT status_code, response FROM idempotency_keys WHERE tenant_id = $1 AND key = $2`, [t.tenantId, key]);
    expect(row).toEqual({ status_code: 201, response: res.body });
  });

  it('keys expire after 24 h: an older key counts as new', async () => {
    const t = await newTenant(ctx);
    await t.get('/v1/uoms').expect(200);
    const key = randomUUID();
    await ctx.db.query(
      `INSERT INTO idempotency_keys (tenant_id, key, request_hash, status_code, response, created_at)
       VALUES ($1, $2, 'old-request', 201, '{"data": "old"}', now() - interval '25 hours')`,
      [t.tenantId, key],
    );
    const res = await post(t, key, { code: 'FRESH', name: 'Fresh', decimals: 0 }).expect(201);
    expect(res.body.data.code).toBe('FRESH');
    // a key 23 h old is still honoured
    const recent = randomUUID();
    await ctx.db.query(
      `INSERT INTO idempotency_keys (tenant_id, key, request_hash, status_code, response, created_at)
       VALUES ($1, $2, 'other-request', 201, '{"data": "old"}', now() - interval '23 hours')`,
      [t.tenantId, recent],
    );
    await post(t, recent, { code: 'RECENT', name: 'Recent', decimals: 0 }).expect(409);
    // a failure under an expired key replaces the old row too
    const expiredThenFailed = randomUUID();
    await ctx.db.query(
      `INSERT INTO idempotency_keys (tenant_id, key, request_hash, status_code, response, created_at)
       VALUES ($1, $2, 'old-request', 201, '{"data": "old"}', now() - interval '25 hours')`,
      [t.tenantId, expiredThenFailed],
    );
    const failed = await post(t, expiredThenFailed, { code: 'BAD', name: 'Bad', decimals: 9 }).expect(400);
    const [row] = await ctx.db.query(`SELECT status_code, response FROM idempotency_keys WHERE tenant_id = $1 AND key = $2`, [t.tenantId, expiredThenFailed]);
    expect(row).toEqual({ status_code: 400, response: failed.body });
  });

  it('validates the key: 1..200 characters', async () => {
    const t = await newTenant(ctx);
    const res = await post(t, 'k'.repeat(201), { code: 'LONG', name: 'Long', decimals: 0 }).expect(400);
    expect(res.body).toMatchObject({ error: 'validation_failed', details: [{ field: 'Idempotency-Key', message: expect.any(String) }] });
    await post(t, 'k'.repeat(200), { code: 'LONG', name: 'Long', decimals: 0 }).expect(201);
    expect(await uomRows(t, 'LONG')).toHaveLength(1);
  });

  it('is ignored on GET', async () => {
    const t = await newTenant(ctx);
    const key = randomUUID();
    await ctx.http.get('/v1/uoms').set(t.auth).set('Idempotency-Key', key).expect(200);
    await post(t, key, { code: 'AFTERGET', name: 'After', decimals: 0 }).expect(201);
  });

  it('is documented on POST operations in the OpenAPI document', async () => {
    const doc = (await ctx.http.get('/openapi.json').expect(200)).body;
    const params = doc.paths['/v1/uoms'].post.parameters as Array<{ name: string; in: string; description: string }>;
    expect(params).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header' })]));
    expect(params.find((p) => p.name === 'Idempotency-Key')!.description).toMatch(/5xx.*not stored/);
    expect(doc.paths['/v1/uoms'].get.parameters ?? []).not.toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key' })]));
  });
});
