import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EmbeddedDatabase } from '../../src/database/embedded-postgres';
import type * as EmbeddedPostgresModule from '../../src/database/embedded-postgres';
import { fromDist } from '../support/dist';
import { freePort } from '../support/ports';
import { newTenant, startApp, TestContext } from '../support/app';

// Loaded with Node's require: embedded-postgres is an ES module, which jest's loader cannot require on Node 20.
const { startEmbeddedPostgres } = fromDist<typeof EmbeddedPostgresModule>('database/embedded-postgres');

const HEALTH = {
  service: 'inventory-service',
  version: require('../../package.json').version,
  timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
};

describe('GET /health', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  it('is public and reports service, status, version and timestamp', async () => {
    const res = await ctx.http.get('/health').expect(200);
    expect(res.body).toEqual({ ...HEALTH, status: 'ok' });
    expect(res.headers['x-request-id']).toBeTruthy();
  });
});

/** Polls `probe` until it returns true or `ms` pass. */
async function eventually(probe: () => Promise<boolean>, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await probe()) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return probe();
}

const timers = new Map<number, string>();
Error.stackTraceLimit = 60;
const ah = require('node:async_hooks');
ah.createHook({
  init(id: number, type: string) { if (type === 'Timeout') timers.set(id, new Error().stack ?? ''); },
  destroy(id: number) { timers.delete(id); },
}).enable();
describe('database outage (CONTRACT §2: 503, recovers by itself)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'inventory-outage-pg-'));
  let port: number;
  let db: EmbeddedDatabase | undefined;
  let ctx: TestContext;

  beforeAll(async () => {
    port = await freePort();
    db = await startEmbeddedPostgres({ dir, port, database: 'inventory_outage', fast: true });
    ctx = await startApp({}, db.url);
  }, 60_000);
  afterAll(async () => {
    await ctx?.close();
    await db?.stop();
    rmSync(dir, { recursive: true, force: true });
    await new Promise((r) => setTimeout(r, 4000));
    require('fs').writeFileSync('/tmp/ps.txt', require('child_process').execSync('ps -ef | grep -i postgres | grep -v grep').toString());
    const hs = (process as any)._getActiveHandles(); require('fs').writeFileSync('/tmp/res.txt', JSON.stringify(process.getActiveResourcesInfo()) + [...timers.values()].join('\n-----\n'));
    require('fs').writeFileSync('/tmp/handles.txt', hs.map((h: any) => h.constructor.name + ' ' + (h.remoteAddress ?? '') + ':' + (h.remotePort ?? '') + ' ' + (h.localPort ?? '') + ' ' + (h.spawnfile ?? '') + (h._idleTimeout ?? '') + ' fd=' + (h._handle?.fd ?? h.fd ?? '') + ' destroyed=' + h.destroyed + ' readable=' + h.readable).join('\n'));
  });

  it('answers 503 while the database is down and recovers when it is back', async () => {
    const t = await newTenant(ctx);
    await t.get('/v1/uoms').expect(200);
    await ctx.http.get('/health').expect(200);

    await db!.stop();
    db = undefined;

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

    db = await startEmbeddedPostgres({ dir, port, database: 'inventory_outage', fast: true });

    expect(await eventually(async () => (await ctx.http.get('/health')).status === 200, 10_000)).toBe(true);
    expect(await eventually(async () => (await t.get('/v1/uoms')).status === 200, 5_000)).toBe(true);
    await t.post('/v1/uoms', { code: 'BACK', name: 'Back', decimals: 0 }).expect(201);
    expect((await fresh.get('/v1/uoms').expect(200)).body.count).toBe(8);
    expect((await ctx.http.get('/health').expect(200)).body.status).toBe('ok');
  }, 60_000);
});
