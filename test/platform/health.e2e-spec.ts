import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../support/ports';
import { newTenant, startApp, TestContext, PLATFORMS } from '../support/app';
import { eventually, OutageDatabase } from '../support/outage';
import { startServiceProcess } from '../support/processes';

const HEALTH = {
  service: 'inventory-service',
  version: require('../../package.json').version,
  timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
};

describe.each(PLATFORMS)('GET /health on %s', (platform) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp({ HTTP_PLATFORM: platform });
  });
  afterAll(() => ctx.close());

  it('is public and reports service, status, version and timestamp', async () => {
    const res = await ctx.http.get('/health').expect(200);
    expect(res.body).toEqual({ ...HEALTH, status: 'ok' });
    expect(res.headers['x-request-id']).toBeTruthy();
  });
});

describe('database outage (CONTRACT §2: 503, recovers by itself)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'inventory-outage-pg-'));
  let db: OutageDatabase;
  let ctx: TestContext;

  beforeAll(async () => {
    db = new OutageDatabase(dir);
    await db.start();
    ctx = await startApp({}, db.url);
  }, 60_000);
  afterAll(async () => {
    await ctx?.close();
    await db?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 while the database is down and recovers when it is back', async () => {
    const t = await newTenant(ctx);
    await t.get('/v1/uoms').expect(200);
    await ctx.http.get('/health').expect(200);

    await db.stop();

    await ctx.http.get('/health/live').expect(200); // liveness needs no database
    const health = await ctx.http.get('/health').expect(503);
    expect(health.body).toEqual({ ...HEALTH, status: 'database_unavailable' });
    const down = { error: 'service_unavailable', message: expect.any(String), status: 503 };
    const read = await t.get('/v1/uoms').expect(503);
    expect(read.body).toEqual(down);
    const write = await t.post('/v1/uoms', { code: 'DOWN', name: 'Down', decimals: 0 }).expect(503);
    expect(write.body).toEqual(down);
    const fresh = await newTenant(ctx); // its provisioning needs the database too
    expect((await fresh.get('/v1/uoms').expect(503)).body).toEqual(down);
    expect(JSON.stringify(read.body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres/i);

    await db.start();

    expect(await eventually(async () => (await ctx.http.get('/health')).status === 200, 10_000)).toBe(true);
    expect(await eventually(async () => (await t.get('/v1/uoms')).status === 200, 5_000)).toBe(true);
    await t.post('/v1/uoms', { code: 'BACK', name: 'Back', decimals: 0 }).expect(201);
    expect((await fresh.get('/v1/uoms').expect(200)).body.count).toBe(8);
    expect((await ctx.http.get('/health').expect(200)).body.status).toBe('ok');
  }, 60_000);
});

describe.each(PLATFORMS)('public paths outside /v1 (CONTRACT §1) on %s', (platform) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp({ HTTP_PLATFORM: platform });
  });
  afterAll(() => ctx.close());

  it('GET /health/live answers without the database; GET / points to the docs and health; /openapi.json and /docs are public', async () => {
    expect((await ctx.http.get('/health/live').expect(200)).body).toEqual({ ...HEALTH, status: 'ok' });
    expect((await ctx.http.get('/').expect(200)).body).toEqual({
      service: 'inventory-service', version: HEALTH.version, docs: '/docs', openapi: '/openapi.json', health: '/health', live: '/health/live',
    });
    const doc = (await ctx.http.get('/openapi.json').expect(200)).body;
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/items', '/v1/procurement/purchase-orders', '/v1/sales/orders', '/v1/production/work-orders']));
    expect((await ctx.http.get('/docs').redirects(1).expect(200)).text).toMatch(/swagger/i);
    await ctx.http.get('/docs/openapi.json').expect(404);
  });

  it('OPENAPI_ENABLED=false turns the description and the docs off', async () => {
    const off = await startApp({ HTTP_PLATFORM: platform, OPENAPI_ENABLED: 'false' });
    try {
      await off.http.get('/openapi.json').expect(404);
      await off.http.get('/docs').expect(404);
      expect((await off.http.get('/').expect(200)).body).toEqual({ service: 'inventory-service', version: HEALTH.version, health: '/health', live: '/health/live' });
    } finally {
      await off.close();
    }
  });
});

describe('starting without a database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'inventory-late-pg-'));
  let db: OutageDatabase;
  let service: Awaited<ReturnType<typeof startServiceProcess>> | undefined;
  afterAll(async () => {
    await service?.stop();
    await db?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts, answers 503 (JSON) on /health and /v1, logs JSON, and becomes ready by itself when the database appears', async () => {
    const port = await freePort();
    db = new OutageDatabase(dir, false, port); // told its URL before it starts: a probed port
    const url = `postgres://postgres:postgres@127.0.0.1:${port}/inventory_outage`;
    service = await startServiceProcess({ AUTH_MODE: 'dev', DATABASE_URL: url, LOG_LEVEL: 'info' });
    expect((await service.http.get('/health').expect(503)).body).toMatchObject({ status: 'database_unavailable' });
    await service.http.get('/health/live').expect(200);
    expect((await service.http.get('/v1/uoms').expect(503)).body).toEqual({ error: 'service_unavailable', message: expect.any(String), status: 503 });
    const warning = service.output().split('\n').find((l) => l.includes('database not reachable'));
    expect(JSON.parse(warning!)).toMatchObject({ level: 40, msg: expect.stringMatching(/retrying/) });

    await db.start();
    expect(await eventually(async () => (await service!.http.get('/health')).status === 200, 20_000)).toBe(true);
    expect((await service.http.get('/v1/uoms').expect(200)).body.count).toBe(8); // migrated, tenant provisioned
  }, 60_000);
});
