import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newTenant, startApp, TestContext } from '../support/app';
import { fromDist } from '../support/dist';
import { adjust, inventoryFixture, onHand } from '../support/fixtures';
import { eventually, OutageDatabase } from '../support/outage';
import type * as Verify from '../../src/inventory/ledger/verify.sql';
import type * as UowModule from '../../src/database/unit-of-work';

const { verifyLedger } = fromDist<typeof Verify>('inventory/ledger/verify.sql');
const { COMMIT_IN_DOUBT } = fromDist<typeof UowModule>('database/unit-of-work');

/**
 * A frozen database (every server process stopped with SIGSTOP: sockets stay open, nothing answers, no
 * error ever comes) with the default settings: no request waits more than DB_REQUEST_TIMEOUT_MS (10 s),
 * each answers 503, /health says the database is unavailable, and when the database thaws the service
 * carries on by itself, having kept nothing of the refused writes but those it said may have taken effect.
 */
describe('frozen database (SIGSTOP)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'inventory-frozen-pg-'));
  let db: OutageDatabase;
  let ctx: TestContext;

  beforeAll(async () => {
    db = new OutageDatabase(dir);
    await db.start();
    ctx = await startApp({}, db.url); // the defaults: DB_REQUEST_TIMEOUT_MS 10000, DB_ACQUIRE_TIMEOUT_MS 5000
  }, 60_000);
  afterAll(async () => {
    try {
      db?.thaw();
    } catch {
      // already stopped
    }
    await ctx?.close();
    await db?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every request answers 503 within 10 s, /health says so, and the service recovers when the database thaws', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5 });
    // Warm every pooled connection, so requests go to open connections of the frozen server as well as new ones.
    await Promise.all(Array.from({ length: 8 }, () => t.get(`/v1/items/${f.item.id}`).expect(200)));

    db.freeze();
    let thawed = false;
    let inDoubt = 0;
    try {
      const timed = async <T extends { status: number }>(call: () => Promise<T>) => {
        const started = Date.now();
        const res = await call();
        return { res, ms: Date.now() - started };
      };
      const answers = await Promise.all([
        ...Array.from({ length: 3 }, () => timed(() => t.get(`/v1/items/${f.item.id}`))),
        ...Array.from({ length: 3 }, () => timed(() => t.post('/v1/inventory/adjustments', { itemId: f.item.id, locationId: f.location.id, qtyDelta: 1, reason: 'frozen' }))),
        ...Array.from({ length: 3 }, () => timed(() => t.get('/v1/inventory/transactions'))),
        timed(() => ctx.http.get('/health')),
      ]);
      for (const { res, ms } of answers) {
        expect({ status: res.status, error: res.body.error ?? res.body.status }).toEqual({
          status: 503, error: res.body.service ? 'database_unavailable' : 'service_unavailable',
        });
        expect(ms).toBeLessThan(11_000);
      }
      // An adjustment is one write with its COMMIT: one that reached a connection of the frozen server
      // answers that it may have taken effect (the server runs what it received once it thaws).
      inDoubt = answers.filter(({ res }) => res.body.message === COMMIT_IN_DOUBT).length;
      // The process itself stays live.
      await ctx.http.get('/health/live').expect(200);
      db.thaw();
      thawed = true;
    } finally {
      if (!thawed) db.thaw();
    }

    expect(await eventually(async () => (await ctx.http.get('/health')).status === 200, 20_000)).toBe(true);
    expect(await eventually(async () => (await t.get(`/v1/items/${f.item.id}`)).status === 200, 20_000)).toBe(true);
    // None of the refused adjustments was kept, beyond those answered "may have taken effect"; a new one posts.
    const sql = (text: string, params?: unknown[]) => ctx.db.query(text, params);
    const [{ n: before }] = await sql('SELECT count(*)::int AS n FROM ledger_transactions WHERE tenant_id = $1', [t.tenantId]);
    const kept = before - 1;
    expect(kept).toBeGreaterThanOrEqual(0);
    expect(kept).toBeLessThanOrEqual(inDoubt);
    expect(await onHand(t, { itemId: f.item.id, locationId: f.location.id })).toBe(5 + kept);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 2 });
    expect(await onHand(t, { itemId: f.item.id, locationId: f.location.id })).toBe(7 + kept);
    expect(await sql('SELECT count(*)::int AS n FROM ledger_transactions WHERE tenant_id = $1', [t.tenantId])).toEqual([{ n: 2 + kept }]);
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  }, 120_000);
});
