import { newTenant, startApp, TestContext, PLATFORMS } from '../support/app';

describe.each(PLATFORMS)('per-tenant rate limit (RATE_LIMIT_PER_MINUTE) on %s', (platform) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp({ HTTP_PLATFORM: platform, RATE_LIMIT_PER_MINUTE: '5' });
  });
  afterAll(() => ctx.close());

  it('refuses the 6th request of a tenant within a minute with 429 and Retry-After, across routes', async () => {
    const a = await newTenant(ctx);
    const first = await a.get('/v1/uoms').expect(200);
    // every limited response says how the tenant stands
    expect(first.headers).toMatchObject({ 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '4' });
    expect(Number(first.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(59);
    await a.post('/v1/uoms', { code: 'R1', name: 'R1', decimals: 0 }).expect(201).expect('x-ratelimit-remaining', '3');
    await a.get('/v1/uoms?q=R').expect(200);
    await a.post('/v1/uoms', { code: 'R2', name: 'R2', decimals: 0 }).expect(201);
    await a.get('/v1/uoms').expect(200);

    const limited = await a.post('/v1/uoms', { code: 'R3', name: 'R3', decimals: 0 }).expect(429);
    expect(limited.body).toEqual({ error: 'rate_limited', message: expect.any(String), status: 429 });
    const retryAfter = Number(limited.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // refused before it ran
    expect(await ctx.db.query(`SELECT 1 FROM uoms WHERE tenant_id = $1 AND code = 'R3'`, [a.tenantId])).toEqual([]);
    await a.get('/v1/uoms').expect(429);
  });

  it('leaves other tenants alone', async () => {
    const a = await newTenant(ctx);
    const b = await newTenant(ctx);
    for (let i = 0; i < 5; i++) await a.get('/v1/uoms').expect(200);
    await a.get('/v1/uoms').expect(429);
    for (let i = 0; i < 5; i++) await b.get('/v1/uoms').expect(200);
    await b.get('/v1/uoms').expect(429);
  });

  it('counts concurrent requests exactly', async () => {
    const t = await newTenant(ctx);
    const statuses = await Promise.all(Array.from({ length: 12 }, () => t.get('/v1/uoms').then((r) => r.status)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(7);
  });

  it('does not limit /health', async () => {
    for (let i = 0; i < 8; i++) await ctx.http.get('/health').expect(200);
  });
});
