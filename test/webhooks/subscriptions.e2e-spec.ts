import { drainFeed } from '../support/feed';
import { newTenant, PLATFORMS, startApp, Tenant, TestContext } from '../support/app';
import { ISO_MS, UUID } from '../support/matchers';

const W = '/v1/webhooks';
const LOOPBACK = 'http://127.0.0.1:9/hook';

/**
 * Webhook subscriptions over HTTP (CONTRACT §9), on each HTTP platform: the record and its secret shown
 * once, the refused targets and bodies, the per-tenant cap, permissions, tenant isolation, DELETE's 204.
 * The test app allows 127.0.0.1 (WEBHOOK_ALLOWED_HOSTS, test/support/app.ts), nothing else; its workers
 * are off (delivery: delivery.e2e-spec.ts).
 */
describe.each(PLATFORMS)('webhook subscriptions on %s', (platform) => {
  let ctx: TestContext;
  let t: Tenant;
  beforeAll(async () => {
    ctx = await startApp({ HTTP_PLATFORM: platform });
    t = await newTenant(ctx);
  });
  afterAll(() => ctx.close());

  it('POST answers 201 with the webhook and its secret once; GET and lists never show it; nothing is an event of the feed', async () => {
    // The feed once it has caught up with the tenant's writes (other specs' open transactions hold its horizon back).
    const events = async () => (await drainFeed(ctx.db, t)).events;
    const before = await events();
    const res = await t.post(W, { url: LOOPBACK, types: ['stock.changed', 'purchase_order.*'], description: 'ERP' }).expect(201);
    const hook = res.body.data;
    expect(hook).toEqual({
      id: expect.stringMatching(UUID), url: LOOPBACK, types: ['stock.changed', 'purchase_order.*'], description: 'ERP', isActive: true,
      createdAt: expect.stringMatching(ISO_MS), updatedAt: expect.stringMatching(ISO_MS), secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(Buffer.from(hook.secret.slice(6), 'base64')).toHaveLength(32);
    const read = (await t.get(`${W}/${hook.id}`).expect(200)).body.data;
    expect(read).toEqual({ ...hook, secret: undefined });
    expect('secret' in read).toBe(false);
    const list = (await t.get(W).expect(200)).body;
    expect(list).toMatchObject({ count: 1, limit: 50, offset: 0, nextCursor: null });
    expect(JSON.stringify(list)).not.toContain(hook.secret);
    // The secret is stored encrypted: not in clear text, nor its base64 part, anywhere in the row.
    const [row] = await ctx.db.query(`SELECT to_jsonb(w)::text AS row FROM webhooks w WHERE id = $1`, [hook.id]);
    expect(row.row).not.toContain(hook.secret.slice(6));
    expect(row.row).toMatch(/"secret_ciphertext": "v1:/);
    // Defaults: every type, no description.
    const plain = (await t.post(W, { url: LOOPBACK }).expect(201)).body.data;
    expect(plain).toMatchObject({ types: [], description: null, isActive: true });
    expect(plain.secret).not.toBe(hook.secret);
    // Webhook changes are not events of the feed (webhooks are not among its resources; an answer with a secret must never be one).
    await t.patch(`${W}/${plain.id}`, { description: 'x' }).expect(200);
    expect(await events()).toEqual(before);
  });

  it('with an Idempotency-Key: the secret is not stored under the key, and a repeat answers the same webhook without it', async () => {
    const u = await newTenant(ctx);
    const key = `hook-${Date.now()}`;
    const first = await u.post(W, { url: LOOPBACK, types: ['stock.changed'] }).set('Idempotency-Key', key).expect(201);
    const hook = first.body.data;
    expect(hook.secret).toMatch(/^whsec_/);
    const again = await u.post(W, { url: LOOPBACK, types: ['stock.changed'] }).set('Idempotency-Key', key).expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual({ data: { ...hook, secret: undefined } });
    expect('secret' in again.body.data).toBe(false);
    // One webhook, and the stored answer holds neither the secret nor its base64 part.
    expect((await u.get(W).expect(200)).body.count).toBe(1);
    const rows = await ctx.db.query(`SELECT response::text AS response FROM idempotency_keys WHERE key = $1`, [key]);
    expect(rows).toHaveLength(1);
    expect(rows[0].response).toContain(hook.id);
    expect(rows[0].response).not.toContain(hook.secret.slice(6));
  });

  it('PATCH changes url, types, description, isActive; DELETE answers 204 and the webhook is gone', async () => {
    const hook = (await t.post(W, { url: LOOPBACK }).expect(201)).body.data;
    const changed = (await t.patch(`${W}/${hook.id}`, { url: 'http://127.0.0.1:10/other', types: ['item.*'], description: 'd', isActive: false }).expect(200)).body.data;
    expect(changed).toEqual({ ...hook, secret: undefined, url: 'http://127.0.0.1:10/other', types: ['item.*'], description: 'd', isActive: false, updatedAt: expect.stringMatching(ISO_MS) });
    expect((await t.patch(`${W}/${hook.id}`, { description: null }).expect(200)).body.data.description).toBeNull();
    await t.patch(`${W}/${hook.id}`, { url: 'http://10.0.0.1/x' }).expect(400);
    const del = await ctx.http.delete(`${W}/${hook.id}`).set(t.auth).expect(204);
    expect(del.text).toBe('');
    await t.get(`${W}/${hook.id}`).expect(404);
    await ctx.http.delete(`${W}/${hook.id}`).set(t.auth).expect(404);
    await t.get(`${W}/${hook.id}/deliveries`).expect(404);
    await t.get(`${W}/not-a-uuid`).expect(404);
  });

  it('refuses non-public targets, other schemes and malformed bodies: 400 validation_failed naming the field', async () => {
    const refused = [
      'http://169.254.169.254/latest/meta-data', 'http://10.1.2.3/hook', 'https://192.168.1.10/hook', 'http://172.16.0.1/', 'http://100.64.0.1/',
      'http://localhost:8080/hook', 'http://127.0.0.2/hook', 'http://[::1]/hook', 'http://[fe80::1]/hook', 'http://[fd00::1]/', 'http://[::ffff:10.0.0.1]/',
      'http://0.0.0.0/', 'ftp://127.0.0.1/hook', 'file:///etc/passwd', 'not a url', 'http://user:pw@127.0.0.1/hook', 'http://no-such-host.invalid/hook',
    ];
    for (const url of refused) {
      const res = await t.post(W, { url });
      expect({ url, status: res.status, error: res.body.error, fields: res.body.details?.map((d: { field: string }) => d.field) }).toEqual({
        url, status: 400, error: 'validation_failed', fields: ['url'],
      });
    }
    const bad: Array<[object, string]> = [
      [{}, 'url'],
      [{ url: LOOPBACK, types: ['stock'] }, 'types'],
      [{ url: LOOPBACK, types: 'stock.changed' }, 'types'],
      [{ url: LOOPBACK, types: Array.from({ length: 21 }, (_, i) => `t${String.fromCharCode(97 + (i % 26))}.x${'y'.repeat(i)}`) }, 'types'],
      [{ url: `http://127.0.0.1/${'x'.repeat(2000)}` }, 'url'],
      [{ url: LOOPBACK, description: 'x'.repeat(501) }, 'description'],
      [{ url: LOOPBACK, secret: 'whsec_mine' }, 'secret'],
      [{ url: LOOPBACK, isActive: false }, 'isActive'],
    ];
    for (const [body, field] of bad) {
      const res = await t.post(W, body);
      expect({ body, status: res.status, fields: res.body.details?.map((d: { field: string }) => d.field) }).toEqual({ body, status: 400, fields: expect.arrayContaining([field]) });
    }
  });

  it('at most 20 webhooks per tenant, also when created at once: then 409 invalid_state', async () => {
    const u = await newTenant(ctx);
    const results = await Promise.all(Array.from({ length: 24 }, (_, i) => u.post(W, { url: `${LOOPBACK}/${i}` })));
    expect(results.map((r) => r.status).sort()).toEqual([...Array(20).fill(201), ...Array(4).fill(409)]);
    const refused = results.find((r) => r.status === 409)!;
    expect(refused.body).toEqual({ error: 'invalid_state', message: expect.stringMatching(/at most 20 webhooks/), status: 409 });
    expect((await u.get(`${W}?limit=500`).expect(200)).body.count).toBe(20);
    // Paged by cursor like every list.
    const first = (await u.get(`${W}?limit=15`).expect(200)).body;
    const second = (await u.get(`${W}?limit=15&after=${first.nextCursor}`).expect(200)).body;
    expect(second.nextCursor).toBeNull();
    expect(new Set([...first.data, ...second.data].map((w: { id: string }) => w.id)).size).toBe(20);
    const one = first.data[0].id as string;
    await ctx.http.delete(`${W}/${one}`).set(u.auth).expect(204);
    await u.post(W, { url: LOOPBACK }).expect(201);
  });

  it('events:read for GET, events:write for POST, PATCH and DELETE', async () => {
    const hook = (await t.post(W, { url: LOOPBACK }).expect(201)).body.data;
    const as = async (permissions: string[]) => {
      const token = await ctx.idp.token({ tenantId: t.tenantId, permissions });
      return (method: 'get' | 'post' | 'patch' | 'delete', url: string, body?: object) => ctx.http[method](url).set('Authorization', `Bearer ${token}`).send(body);
    };
    const reader = await as(['events:read']);
    expect((await reader('get', W)).status).toBe(200);
    expect((await reader('get', `${W}/${hook.id}`)).status).toBe(200);
    expect((await reader('get', `${W}/${hook.id}/deliveries`)).status).toBe(200);
    expect((await reader('post', W, { url: LOOPBACK })).status).toBe(403);
    expect((await reader('patch', `${W}/${hook.id}`, { description: 'r' })).status).toBe(403);
    expect((await reader('delete', `${W}/${hook.id}`)).status).toBe(403);
    const writer = await as(['events:write']);
    expect((await writer('get', W)).status).toBe(403);
    expect((await writer('get', `${W}/${hook.id}/deliveries`)).status).toBe(403);
    expect((await writer('patch', `${W}/${hook.id}`, { description: 'w' })).status).toBe(200);
    expect((await writer('delete', `${W}/${hook.id}`)).status).toBe(204);
    const other = await as(['catalog:read', 'catalog:write']);
    expect((await other('get', W)).status).toBe(403);
  });

  it("another tenant cannot see, change or delete a tenant's webhooks or their deliveries", async () => {
    const hook = (await t.post(W, { url: LOOPBACK }).expect(201)).body.data;
    const b = await newTenant(ctx);
    await b.get(`${W}/${hook.id}`).expect(404);
    await b.get(`${W}/${hook.id}/deliveries`).expect(404);
    await b.patch(`${W}/${hook.id}`, { isActive: false }).expect(404);
    await ctx.http.delete(`${W}/${hook.id}`).set(b.auth).expect(404);
    expect((await b.get(W).expect(200)).body).toMatchObject({ data: [], count: 0 });
    expect((await t.get(`${W}/${hook.id}`).expect(200)).body.data.isActive).toBe(true);
  });
});
