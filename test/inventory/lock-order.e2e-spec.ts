import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type * as UowModule from '../../src/database/unit-of-work';
import type * as LedgerModule from '../../src/inventory/ledger/ledger.service';
import { fromDist, nativeRequire } from '../support/dist';
import { newTenant, startApp, TestContext, testDatabaseUrl } from '../support/app';
import { adjust, inventoryFixture, newItem } from '../support/fixtures';
import { backendPid, waiterBlockedBy } from '../support/locks';

/**
 * Postings lock counter rows in one order (balances by key, then positions). A posting's look-up
 * statement may lock its lines' rows ahead (Counters.prelock) — but not when a line names a lot by
 * number, whose balance is only known later: locking the other lines' rows first would take that
 * balance out of order, and two such postings could deadlock.
 */
describe('lock order of a posting with a lot named by number', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  it('holds no later balance while it waits for an earlier one', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { items: [{ lotTracking: 'required' }] });
    const lotted = f.item;
    // an untracked item that comes after the lot-tracked one in the lock order (by item id)
    let plain = await newItem(t, f.uom('EA'));
    while (plain.id < lotted.id) plain = await newItem(t, f.uom('EA'));
    await adjust(t, { itemId: lotted.id, locationId: f.location.id, qtyDelta: 5, lotNo: 'L1' });
    await adjust(t, { itemId: plain.id, locationId: f.location.id, qtyDelta: 5 });
    const balances: Array<{ id: string; item_id: string }> = await ctx.db.query(`SELECT id, item_id FROM balances WHERE tenant_id = $1`, [t.tenantId]);
    const first = balances.find((b) => b.item_id === lotted.id)!.id;
    const later = balances.find((b) => b.item_id === plain.id)!.id;

    // another transaction holds the first balance
    const holder = new Client({ connectionString: testDatabaseUrl() });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM balances WHERE id = $1 FOR UPDATE', [first]);
    const holderPid = await backendPid((text, params) => holder.query(text, params).then((r) => r.rows));
    try {
      const uow = ctx.app.get(fromDist<typeof UowModule>('database/unit-of-work').UnitOfWork);
      const ledger = ctx.app.get(fromDist<typeof LedgerModule>('inventory/ledger/ledger.service').LedgerService);
      const cls = ctx.app.get((nativeRequire('nestjs-cls') as { ClsService: new () => unknown }).ClsService) as {
        run<T>(f: () => T): T;
        set(key: string, value: unknown): void;
      };
      const posting = cls.run(() => {
        cls.set('principal', { tenantId: t.tenantId, userId: `user-${randomUUID()}`, permissions: new Set() });
        return uow.run(() =>
          ledger.post({
            type: 'adjustment',
            reason: 'lock order',
            lines: [
              { itemId: lotted.id, locationId: f.location.id, qty: '1', lotNo: 'L1' },
              { itemId: plain.id, locationId: f.location.id, qty: '1' },
            ],
          }),
        );
      });
      // the posting now waits for the first balance (its backend is blocked by the holder's)...
      const waiter = await waiterBlockedBy((text, params) => ctx.db.query(text, params), holderPid);
      expect(waiter).toMatchObject({ waitEventType: 'Lock', blockedBy: [holderPid] });
      // ...and the later one must still be free
      const probe = new Client({ connectionString: testDatabaseUrl() });
      await probe.connect();
      const later$ = await probe.query('SELECT 1 FROM balances WHERE id = $1 FOR UPDATE NOWAIT', [later]).then(
        () => 'free',
        (e: { code: string }) => `locked (${e.code})`,
      );
      await probe.end();
      expect(later$).toBe('free');
      await holder.query('ROLLBACK');
      const txn = await posting;
      expect(txn.lines).toHaveLength(2);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
  });
});
