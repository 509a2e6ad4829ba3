import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { newTenant, startApp, TestContext, testDatabaseUrl, PLATFORMS } from '../support/app';
import { fromDist, nativeRequire } from '../support/dist';
import { adjust, inventoryFixture } from '../support/fixtures';
import { TestIdp } from '../support/idp';
import { backendPid, waiterBlockedBy } from '../support/locks';
import { startServiceProcess } from '../support/processes';
import type * as SettingsModule from '../../src/config/settings';

type PgClient = { connect(): Promise<void>; query(sql: string, params?: unknown[]): Promise<unknown>; end(): Promise<void> };
const { Client } = nativeRequire('pg') as { Client: new (o: { connectionString: string }) => PgClient };

/** The JSON lines a service process wrote (anything else is a failure: every line is JSON). */
function jsonLines(output: string): Array<Record<string, unknown>> {
  return output.split('\n').filter((l) => l.trim()).map((l) => {
    try {
      return JSON.parse(l) as Record<string, unknown>;
    } catch {
      throw new Error(`not a JSON log line: ${l}`);
    }
  });
}

/** Prometheus text → value of one sample (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = line.slice(name.length).split(' ')[0];
    if (wanted.every((w) => labelText.includes(w))) return Number(line.split(' ').pop());
  }
  return 0;
}

describe.each(PLATFORMS)('operations: logs on %s', (platform) => {
  it('one JSON line per request (request id, tenant, user, route pattern, status, ms; 4xx info, 5xx error with its cause), JSON start and shutdown lines, no token or password', async () => {
    const idp = await TestIdp.start();
    const service = await startServiceProcess({
      HTTP_PLATFORM: platform,
      NODE_ENV: 'production', LOG_LEVEL: 'info', AUTH_MODE: 'jwt', DATABASE_URL: testDatabaseUrl(),
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'), // required in production
      IDP_ISSUER_URL: idp.issuer, IDP_AUDIENCE: idp.audience, CLAIM_NAMESPACE: idp.claimNamespace,
      DB_REQUEST_TIMEOUT_MS: '500', DB_LOCK_TIMEOUT_MS: '0', DB_STATEMENT_TIMEOUT_MS: '0',
    });
    let locker: PgClient | undefined;
    try {
      const ctx = { idp, http: service.http } as unknown as TestContext;
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const ok = await t.get(`/v1/items/${f.item.id}`).expect(200);
      const missing = await t.get('/v1/items/00000000-0000-4000-8000-00000000abcd').expect(404);
      const readOnly = await newTenant(ctx, ['catalog:read']);
      const forbidden = await readOnly.post('/v1/items', { itemNo: 'X', name: 'X' }).expect(403);
      // A request stuck behind a row lock past DB_REQUEST_TIMEOUT_MS: a 503 with its cause.
      locker = new Client({ connectionString: testDatabaseUrl() });
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM items WHERE id = $1 FOR UPDATE', [f.item.id]);
      const stuck = await t.patch(`/v1/items/${f.item.id}`, { name: 'stuck' }).expect(503);
      await locker.query('ROLLBACK');
      // A client that hangs up before its answer: one warn line saying so.
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM items WHERE id = $1 FOR UPDATE', [f.item.id]);
      const abandonedId = `abandoned-${Date.now()}`;
      const hangUp = new AbortController();
      const abandoned = fetch(`${service.url}/v1/items/${f.item.id}`, {
        method: 'PATCH',
        headers: { Authorization: `Bearer ${t.token}`, 'Content-Type': 'application/json', 'X-Request-Id': abandonedId },
        body: JSON.stringify({ name: 'abandoned' }),
        signal: hangUp.signal,
      }).then(() => 'answered', (err: Error) => err.name);
      // The client hangs up only once the service's statement waits on the lock: the request has arrived.
      const rowsOf = (c: PgClient) => async (text: string, params?: unknown[]) => ((await c.query(text, params)) as { rows: Array<Record<string, unknown>> }).rows;
      const watcher = new Client({ connectionString: testDatabaseUrl() });
      await watcher.connect();
      try {
        await waiterBlockedBy(rowsOf(watcher), await backendPid(rowsOf(locker)));
      } finally {
        await watcher.end();
      }
      hangUp.abort();
      expect(await abandoned).toBe('AbortError');
      await locker.query('ROLLBACK');
      await service.stop();

      const lines = jsonLines(service.output());
      const byId = (res: { headers: Record<string, string> }) => lines.filter((l) => l.requestId === res.headers['x-request-id']);
      expect(byId(ok)).toEqual([expect.objectContaining({
        level: 30, tenant: t.tenantId, user: expect.stringMatching(/^user-/), method: 'GET', route: '/v1/items/:id', status: 200, ms: expect.any(Number),
      })]);
      expect(byId(missing)).toEqual([expect.objectContaining({ level: 30, route: '/v1/items/:id', status: 404 })]);
      expect(byId(forbidden)).toEqual([expect.objectContaining({ level: 30, tenant: readOnly.tenantId, route: '/v1/items', status: 403 })]);
      expect(byId(stuck)).toEqual([expect.objectContaining({
        level: 50, route: '/v1/items/:id', status: 503, err: expect.objectContaining({ message: expect.stringMatching(/did not finish the request within 500 ms/) }),
      })]);
      expect(lines.filter((l) => l.requestId === abandonedId)).toEqual([expect.objectContaining({
        level: 40, aborted: true, method: 'PATCH', route: '/v1/items/:id', tenant: t.tenantId, msg: 'PATCH /v1/items/:id aborted by the client',
      })]);
      // Start and shutdown are JSON lines too.
      expect(lines.find((l) => String(l.msg).includes('listening on'))).toMatchObject({ level: 30, port: expect.any(Number), authMode: 'jwt' });
      expect(lines.find((l) => String(l.msg).includes('stopped on SIGTERM'))).toMatchObject({ level: 30, signal: 'SIGTERM' });
      // Never a token, an Authorization header or the database password.
      const password = new URL(testDatabaseUrl()).password;
      expect(service.output()).not.toContain(t.token.split('.')[2]);
      expect(service.output()).not.toMatch(/authorization/i);
      if (password) expect(service.output()).not.toContain(password);
    } finally {
      await locker?.end().catch(() => undefined);
      await service.stop();
      await idp.stop();
    }
  });
});

describe.each(PLATFORMS)('operations: metrics on %s', (platform) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp({ HTTP_PLATFORM: platform, METRICS_ENABLED: 'true' });
  });
  afterAll(() => ctx.close());

  it('GET /metrics counts requests by route pattern and status, ledger postings by type, refusals by error code, and shows the pool', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5 });
    const before = (await ctx.http.get('/metrics').expect(200).expect('Content-Type', /^text\/plain/)).text;

    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 2 });
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: -1 });
    await t.post('/v1/inventory/adjustments', { itemId: f.item.id, locationId: f.location.id, qtyDelta: -100, reason: 'too much' }).expect(409);
    await t.get(`/v1/items/${f.item.id}`).expect(200);
    const after = (await ctx.http.get('/metrics').expect(200)).text;

    const delta = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);
    // each by the way it went: the direct way (the first adjustment above learned the item's facts, if this process did not know them)
    expect(delta('ledger_postings_total', { type: 'adjustment', way: 'direct' })).toBe(2);
    expect(delta('ledger_postings_total', { type: 'adjustment', way: 'full' })).toBe(0);
    expect(delta('http_errors_total', { error: 'insufficient_stock', status: '409' })).toBe(1);
    expect(delta('http_requests_total', { method: 'POST', route: '/v1/inventory/adjustments', status: '201' })).toBe(2);
    expect(delta('http_requests_total', { method: 'POST', route: '/v1/inventory/adjustments', status: '409' })).toBe(1);
    expect(delta('http_requests_total', { method: 'GET', route: '/v1/items/:id', status: '200' })).toBe(1);
    expect(delta('http_request_duration_seconds_count', { method: 'GET', route: '/v1/items/:id', status: '200' })).toBe(1);
    // Bounded labels: no ids or raw URLs, no tenants.
    expect(after).not.toContain(f.item.id);
    expect(after).not.toContain(t.tenantId);
    expect(after).toMatch(/^db_pool_connections\{state="in_use"\} \d+$/m);
    expect(after).toMatch(/^db_pool_connections\{state="idle"\} \d+$/m);
    expect(after).toMatch(/^db_pool_waiting \d+$/m);
  });

  it('is off by default: 404', async () => {
    const plain = await startApp({ HTTP_PLATFORM: platform });
    try {
      await plain.http.get('/metrics').expect(404);
    } finally {
      await plain.close();
    }
  });
});

describe('operations: configuration', () => {
  it('wrong values stop the start with one JSON line naming each variable and what it expects (the password masked)', async () => {
    const failed = await startServiceProcess({
      AUTH_MODE: 'dev', DATABASE_URL: 'localhost:5432/inventory', LOG_LEVEL: 'loud', METRICS_ENABLED: 'maybe', DB_POOL_SIZE: 'five',
    }).then(() => undefined, (err: Error) => err.message);
    expect(failed).toMatch(/exited with 1/);
    const [line] = jsonLines(failed!.slice(failed!.indexOf('\n') + 1));
    expect(line).toMatchObject({ level: 60, msg: expect.stringMatching(/^Invalid configuration/) });
    const problems = (line.problems as string[]).join('\n');
    expect(problems).toMatch(/DATABASE_URL="localhost:5432\/inventory": DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ connection URL/);
    expect(problems).toMatch(/LOG_LEVEL="loud": LOG_LEVEL must be one of/);
    expect(problems).toMatch(/METRICS_ENABLED="maybe": METRICS_ENABLED must be true or false/);
    expect(problems).toMatch(/DB_POOL_SIZE="five": DB_POOL_SIZE must be an integer/);

    const { loadSettings } = fromDist<typeof SettingsModule>('config/settings');
    expect(() => loadSettings({ AUTH_MODE: 'dev', DATABASE_URL: 'postgres://app:s3cret@db/x y' })).toThrow(/DATABASE_URL="postgres:\/\/app:\*\*\*@db\/x y"/);
    expect(() => loadSettings({ AUTH_MODE: 'dev', PORT: '70000' })).toThrow(/PORT="70000": PORT must not be greater than 65535/);
  });

  it('.env.example lists every variable the service, the tests, the benchmark and CI read', () => {
    const root = join(__dirname, '..', '..');
    const example = readFileSync(join(root, '.env.example'), 'utf8');
    const listed = new Set([...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]));
    const { Settings } = fromDist<typeof SettingsModule>('config/settings');
    const read = new Set(Object.keys(new Settings()));
    const sources = ['bench/run.js', 'bench/scenarios.js', 'bench/seed.js', 'bench/baselines.js', 'test/support/global-setup.ts', 'test/support/dist.ts',
      'test/support/app.ts', 'test/support/platforms.ts', 'test/platform/generated-input.e2e-spec.ts', '.ci/run'];
    for (const file of sources) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const m of text.matchAll(/\b(BENCH_[A-Z_]+|TEST_[A-Z_]+|PROPERTY_RUNS|DEBUG_GEN|PG15_[A-Z_]+|CI_[A-Z_]+)\b/g)) read.add(m[1]);
    }
    expect([...read].filter((v) => !listed.has(v)).sort()).toEqual([]);
  });
});
