import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type * as UowModule from '../../src/database/unit-of-work';
import type * as LedgerModule from '../../src/inventory/ledger/ledger.service';
import { fromDist, nativeRequire } from '../support/dist';
import { newTenant, startApp, TestContext, testDatabaseUrl } from '../support/app';
import { adjust, inventoryFixture } from '../support/fixtures';
import { backendPid, waiterBlockedBy } from '../support/locks';

/**
 * Postings that do not lock their counter rows before they write them — an adjustment's one statement
 * (DirectPostings), a single-line posting of the full way (Counters.check) — rely on the counters' CHECK
 * constraints when another posting changes the same rows in between: the loser runs again, locking
 * first, and gets the exact answer. Each race is staged here step by step with real transactions.
 */
describe('postings that lose a race for their counter rows', () => {
  let ctx: TestContext;
  let uow: InstanceType<typeof UowModule.UnitOfWork>;
  let ledger: InstanceType<typeof LedgerModule.LedgerService>;
  let cls: { run<T>(f: () => T): T; set(key: string, value: unknown): void };
  beforeAll(async () => {
    ctx = await startApp();
    uow = ctx.app.get(fromDist<typeof UowModule>('database/unit-of-work').UnitOfWork);
    ledger = ctx.app.get(fromDist<typeof LedgerModule>('inventory/ledger/ledger.service').LedgerService);
    cls = ctx.app.get((nativeRequire('nestjs-cls') as { ClsService: new () => unknown }).ClsService) as typeof cls;
  });
  afterAll(() => ctx.close());

  /** Runs `work` in a unit of work of the tenant, as a user of it. */
  const asTenant = <T>(tenantId: string, work: () => Promise<T>): Promise<T> =>
    cls.run(() => {
      cls.set('principal', { tenantId, userId: `user-${randomUUID()}`, permissions: new Set() });
      return uow.run(work);
    });

  /**
   * Resolves once the statement starting with `prefix` waits for a lock held by the backend `holder`
   * (the race is staged), and shows that it does wait for that lock.
   */
  async function waitingOnLock(holder: number, prefix: string): Promise<void> {
    const waiter = await waiterBlockedBy((text, params) => ctx.db.query(text, params), holder, { statement: prefix });
    expect(waiter).toMatchObject({ waitEventType: 'Lock', blockedBy: [holder] });
  }

  /**
   * A posting of −1 in a unit of work that stays open (its counter rows locked, its change not yet
   * committed) until `commit()` is called.
   */
  async function openPosting(tenantId: string, itemId: string, locationId: string) {
    let commit!: () => void;
    const gate = new Promise<void>((r) => (commit = r));
    let posted!: (pid: number) => void;
    const written = new Promise<number>((r) => (posted = r));
    const done = asTenant(tenantId, async () => {
      await ledger.post({ type: 'adjustment', reason: 'first', lines: [{ itemId, locationId, qty: '-1' }] });
      posted(await backendPid((text, params) => uow.manager.query(text, params)));
      await gate;
    });
    const pid = await written;
    return { commit, done, pid };
  }

  async function stockOf(tenantId: string) {
    const [b] = await ctx.db.query(`SELECT qty_on_hand::float AS on_hand FROM balances WHERE tenant_id = $1`, [tenantId]);
    const [p] = await ctx.db.query(`SELECT qty_available_on_hand::float AS on_hand FROM inventory_positions WHERE tenant_id = $1`, [tenantId]);
    const [l] = await ctx.db.query(`SELECT count(*)::int AS lines, sum(qty_delta)::float AS total FROM ledger_lines WHERE tenant_id = $1`, [tenantId]);
    return { balance: b.on_hand, position: p.on_hand, ...l };
  }

  it('an adjustment that read 5 on hand and wants 5 waits for a posting that takes 1: it is refused with the exact 409, and nothing of it is written', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5 });
    const first = await openPosting(t.tenantId, f.item.id, f.location.id);
    // its statement reads 5 on hand (the first posting has not committed) and waits for the balance row
    const second = t.post('/v1/inventory/adjustments', { itemId: f.item.id, locationId: f.location.id, qtyDelta: -5, reason: 'second' });
    const answer = second.then((r) => r);
    await waitingOnLock(first.pid, 'WITH k AS');
    first.commit();
    await first.done;
    const res = await answer;
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('insufficient_stock');
    // the answer of the full way (run again, locking first): what is really there now
    expect(res.body.details[0]).toMatchObject({ field: 'qtyDelta', itemId: f.item.id, locationId: f.location.id, requested: 5, available: 4 });
    expect(await stockOf(t.tenantId)).toEqual({ balance: 4, position: 4, lines: 2, total: 4 });
    const numbers = (await ctx.db.query(`SELECT txn_no FROM ledger_transactions WHERE tenant_id = $1 ORDER BY txn_no`, [t.tenantId])).map((r: { txn_no: string }) => r.txn_no);
    expect(numbers).toEqual(['TX-000001', 'TX-000002']);
    // and once the stock is there, the same adjustment passes
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: -4 });
    expect(await stockOf(t.tenantId)).toMatchObject({ balance: 0, position: 0 });
  });

  it('a single-line posting of the full way that read its rows without a lock loses the same race: run again with locks, 409', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5 });
    const first = await openPosting(t.tenantId, f.item.id, f.location.id);
    // not the last work of its unit of work: the full way (look-ups, then the journal statement)
    const second = asTenant(t.tenantId, () =>
      ledger.post({ type: 'adjustment', reason: 'second', lines: [{ itemId: f.item.id, locationId: f.location.id, qty: '-5' }] }),
    ).then(() => 'posted', (e: { status?: number; code?: string; details?: unknown[] }) => e);
    await waitingOnLock(first.pid, 'WITH counter_b AS');
    first.commit();
    await first.done;
    expect(await second).toMatchObject({ status: 409, code: 'insufficient_stock', details: [expect.objectContaining({ requested: 5, available: 4 })] });
    expect(await stockOf(t.tenantId)).toEqual({ balance: 4, position: 4, lines: 2, total: 4 });
  });

  it('a single-line posting that reads a shortage without a lock looks again with the rows locked: it waits for a release in flight and passes', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5 });
    const held = (await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 5 }).expect(201)).body.data;
    // a release of the hold, written but not committed
    let commit!: () => void;
    const gate = new Promise<void>((r) => (commit = r));
    let released!: (pid: number) => void;
    const written = new Promise<number>((r) => (released = r));
    const release = asTenant(t.tenantId, async () => {
      await ledger.release(held.id, 'released');
      released(await backendPid((text, params) => uow.manager.query(text, params)));
      await gate;
    });
    const releasePid = await written;
    // the committed counters say all 5 are reserved: read without a lock that is a shortage
    const posting = asTenant(t.tenantId, () =>
      ledger.post({ type: 'adjustment', reason: 'after the release', lines: [{ itemId: f.item.id, locationId: f.location.id, qty: '-5' }] }),
    );
    // run again with locks: the look-up now waits for the position the release holds
    await waitingOnLock(releasePid, 'WITH i AS');
    commit();
    await release;
    expect((await posting).lines).toEqual([expect.objectContaining({ qtyDelta: -5 })]);
    expect(await stockOf(t.tenantId)).toEqual({ balance: 0, position: 0, lines: 2, total: 0 });
  });

  it('ids the full way would not find as written (capitals) and an empty status go the full way', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5 });
    const post = (line: Record<string, unknown>) =>
      asTenant(t.tenantId, () =>
        ledger.adjust({ reason: 'ids', itemId: f.item.id, locationId: f.location.id, qtyDelta: 1, ...line }),
      ).then((tx) => tx.lines[0], (e: { status?: number }) => e.status);
    expect(await post({ itemId: f.item.id.toUpperCase() })).toBe(404);
    expect(await post({ locationId: f.location.id.toUpperCase() })).toBe(404);
    expect(await post({ statusId: '' })).toMatchObject({ statusId: f.status('AVAILABLE'), qtyDelta: 1 });
    expect(await stockOf(t.tenantId)).toEqual({ balance: 6, position: 6, lines: 2, total: 6 });
  });

  it('waiting for its balance, an adjustment holds neither the position nor the tenant\'s TX number (the lock order, within its one statement)', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5 });
    const holder = new Client({ connectionString: testDatabaseUrl() });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM balances WHERE tenant_id = $1 FOR UPDATE', [t.tenantId]);
    const holderPid = await backendPid((text, params) => holder.query(text, params).then((r) => r.rows));
    try {
      const posting = t.post('/v1/inventory/adjustments', { itemId: f.item.id, locationId: f.location.id, qtyDelta: -2, reason: 'waits' }).then((r) => r);
      await waitingOnLock(holderPid, 'WITH k AS');
      const probe = new Client({ connectionString: testDatabaseUrl() });
      await probe.connect();
      const free = async (sql: string) => probe.query(sql, [t.tenantId]).then(() => 'free', (e: { code: string }) => `locked (${e.code})`);
      expect(await free('SELECT 1 FROM inventory_positions WHERE tenant_id = $1 FOR UPDATE NOWAIT')).toBe('free');
      expect(await free(`SELECT 1 FROM document_sequences WHERE tenant_id = $1 AND prefix = 'TX' FOR UPDATE NOWAIT`)).toBe('free');
      await probe.end();
      await holder.query('ROLLBACK');
      expect((await posting).status).toBe(201);
      expect(await stockOf(t.tenantId)).toEqual({ balance: 3, position: 3, lines: 2, total: 3 });
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
  });
});
