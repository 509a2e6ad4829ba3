import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newTenant, startApp, TestContext, PLATFORMS } from '../support/app';
import { fromDist } from '../support/dist';
import { adjust, inventoryFixture } from '../support/fixtures';
import { eventually, OutageDatabase } from '../support/outage';
import { sleep } from '../support/matchers';
import type * as Verify from '../../src/inventory/ledger/verify.sql';

const { verifyLedger } = fromDist<typeof Verify>('inventory/ledger/verify.sql');

/**
 * The database is killed (immediate shutdown: connections drop mid-statement) under a steady write load.
 * Every answer is 201 or 503 — never a 500 —, the service recovers by itself when the database is back,
 * every 201 is in the ledger, nothing refused is (except a request whose COMMIT was in flight when the
 * connection broke: its 503 says the outcome is unknown), and every invariant holds.
 */
describe.each(PLATFORMS)('database killed under load on %s', (platform) => {
  const dir = mkdtempSync(join(tmpdir(), 'inventory-fault-pg-'));
  let db: OutageDatabase;
  let ctx: TestContext;

  beforeAll(async () => {
    db = new OutageDatabase(dir, true);
    await db.start();
    ctx = await startApp({ HTTP_PLATFORM: platform, DB_POOL_SIZE: '5', DB_ACQUIRE_TIMEOUT_MS: '1000' }, db.url);
  }, 60_000);
  afterAll(async () => {
    await ctx?.close();
    await db?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 201 or 503 only, recovers, and the ledger holds exactly the acknowledged postings', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const acknowledged: string[] = [];
    const statuses: number[] = [];
    // Refused requests by reason: whether the answer said the COMMIT was in flight (outcome unknown).
    const refused = new Map<string, boolean>();
    let running = true;
    const worker = async (w: number) => {
      for (let i = 0; running; i++) {
        const reason = `w${w}-${i}`;
        const res = await t.post('/v1/inventory/adjustments', { itemId: f.item.id, locationId: f.location.id, qtyDelta: 1, reason });
        statuses.push(res.status);
        if (res.status === 201) acknowledged.push(res.body.data.id);
        else {
          expect(res.body).toMatchObject({ error: 'service_unavailable', status: 503 });
          refused.set(reason, /may have taken effect/.test(res.body.message));
        }
        if (res.status !== 201) await sleep(50);
      }
    };
    const workers = Promise.all([1, 2, 3, 4, 5, 6].map(worker));
    await sleep(700);
    await db.crash();
    await sleep(700);
    const duringOutage = statuses.length;
    await db.start();
    expect(await eventually(async () => (await ctx.http.get('/health')).status === 200, 15_000)).toBe(true);
    await sleep(700);
    running = false;
    await workers;

    expect(new Set(statuses)).toEqual(new Set([201, 503]));
    expect(statuses.length).toBeGreaterThan(duringOutage); // writes went on after the restart
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 1 }).then((r) => acknowledged.push(r.body.data.id));

    const sql = (text: string, params?: unknown[]) => ctx.db.query(text, params);
    const rows: Array<{ id: string; reason: string }> = await sql(`SELECT id, reason FROM ledger_transactions WHERE tenant_id = $1 AND type = 'adjustment'`, [t.tenantId]);
    // Every 201 is in the ledger. Of the refused requests, only those told their COMMIT was in flight
    // (outcome unknown, retry with the Idempotency-Key) may be there; none refused before committing is.
    const inLedger = new Set(rows.map((r) => r.id));
    for (const id of acknowledged) expect(inLedger.has(id)).toBe(true);
    const unacknowledged = rows.filter((r) => !acknowledged.includes(r.id));
    for (const r of unacknowledged) expect({ reason: r.reason, inDoubt: refused.get(r.reason) }).toEqual({ reason: r.reason, inDoubt: true });
    const [balance] = await sql(`SELECT qty_on_hand::int AS q FROM balances WHERE tenant_id = $1 AND item_id = $2`, [t.tenantId, f.item.id]);
    expect(balance.q).toBe(rows.length);
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  }, 90_000);
});
