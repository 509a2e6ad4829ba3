import { startApp, TestContext, newTenant } from '../support/app';
import { adjust, inventoryFixture } from '../support/fixtures';

/**
 * A request that waits on the database past a configured limit answers 503 service_unavailable with
 * Retry-After, quickly, and gives its connection back: the next request is served.
 */
describe('database limits answer 503 quickly', () => {
  const limits: Array<[string, Record<string, string>]> = [
    ['lock_timeout', { DB_LOCK_TIMEOUT_MS: '400', DB_STATEMENT_TIMEOUT_MS: '0' }],
    ['statement_timeout', { DB_LOCK_TIMEOUT_MS: '0', DB_STATEMENT_TIMEOUT_MS: '400' }],
  ];
  for (const [name, env] of limits) {
    describe(name, () => {
      let ctx: TestContext;
      beforeAll(async () => {
        ctx = await startApp({ ...env, DB_POOL_SIZE: '2' });
      });
      afterAll(() => ctx.close());

      it('a posting stuck behind a row lock answers 503 with Retry-After and frees its connection', async () => {
        const t = await newTenant(ctx);
        const f = await inventoryFixture(t);
        await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5 });
        const holder = ctx.db.createQueryRunner();
        await holder.connect();
        await holder.startTransaction();
        try {
          await holder.query(`SELECT 1 FROM balances WHERE tenant_id = $1 FOR UPDATE`, [t.tenantId]);
          // More requests than connections: each must give its connection back when its limit hits.
          const started = Date.now();
          const stuck = await Promise.all(
            Array.from({ length: 4 }, () => t.post('/v1/inventory/adjustments', { itemId: f.item.id, locationId: f.location.id, qtyDelta: 1, reason: 'stuck' })),
          );
          expect(Date.now() - started).toBeLessThan(5000);
          for (const res of stuck) {
            expect(res.status).toBe(503);
            expect(res.body).toEqual({ error: 'service_unavailable', message: expect.any(String), status: 503 });
            expect(res.headers['retry-after']).toBe('1');
          }
        } finally {
          await holder.rollbackTransaction();
          await holder.release();
        }
        // Nothing of the refused requests was posted, and the service serves again at once.
        await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 1 });
        const balance = (await t.get(`/v1/inventory/balances?itemId=${f.item.id}`).expect(200)).body.data[0];
        expect(balance.qtyOnHand).toBe(6);
      });
    });
  }
});
