import type { EntityManager } from 'typeorm';
import type * as UnitOfWorkModule from '../../src/database/unit-of-work';
import { newTenant, startApp, TestContext } from '../support/app';
import { fromDist } from '../support/dist';

const { UnitOfWork } = fromDist<typeof UnitOfWorkModule>('database/unit-of-work');

/** The unit of work retries a whole unit after a deadlock or a serialization failure. */
describe('unit of work retries', () => {
  let ctx: TestContext;
  let uow: InstanceType<typeof UnitOfWork>;
  beforeAll(async () => {
    ctx = await startApp();
    uow = ctx.app.get(UnitOfWork);
  });
  afterAll(() => ctx.close());

  it('re-runs the work after a real deadlock (40P01) and both units succeed', async () => {
    const t = await newTenant(ctx);
    await t.get('/v1/uoms').expect(200); // provisions the tenant's UOMs
    let firstLocks = 0;
    let release!: () => void;
    const bothLocked = new Promise<void>((resolve) => (release = resolve));
    let attempts = 0;
    // Two units lock the same two rows in opposite orders: PostgreSQL aborts one with a deadlock.
    const unit = (first: string, second: string) => (m: EntityManager) =>
      (async () => {
        attempts++;
        await m.query(`UPDATE uoms SET name = name WHERE code = $1`, [first]);
        if (++firstLocks === 2) release();
        await bothLocked;
        await m.query(`UPDATE uoms SET name = name WHERE code = $1`, [second]);
        return first;
      })();
    const results = await Promise.all([uow.run(unit('EA', 'KG'), t.tenantId), uow.run(unit('KG', 'EA'), t.tenantId)]);
    expect(results.sort()).toEqual(['EA', 'KG']);
    expect(attempts).toBe(3);
  });

  it('re-runs after a serialization failure (40001), and gives up on other errors at once', async () => {
    const t = await newTenant(ctx);
    let calls = 0;
    const flaky = async () => {
      calls++;
      if (calls < 3) throw Object.assign(new Error('could not serialize access'), { code: '40001' });
      return 'done';
    };
    await expect(uow.run(flaky, t.tenantId)).resolves.toBe('done');
    expect(calls).toBe(3);

    let failures = 0;
    const broken = async () => {
      failures++;
      throw Object.assign(new Error('check violation'), { code: '23514' });
    };
    await expect(uow.run(broken, t.tenantId)).rejects.toThrow('check violation');
    expect(failures).toBe(1);
  });

  describe('commitWith: COMMIT sent with the last statement', () => {
    const kept = async (tenantId: string, code: string) =>
      (await ctx.db.query(`SELECT count(*)::int AS n FROM uoms WHERE tenant_id = $1 AND code = $2`, [tenantId, code]))[0].n;
    const provisioned = async () => {
      const t = await newTenant(ctx);
      await t.get('/v1/uoms').expect(200); // the tenant's first request provisions it
      return t;
    };
    const insert = (m: EntityManager, tenantId: string, code: string) =>
      m.query(`INSERT INTO uoms (tenant_id, code, name, decimals) VALUES ($1, $2, 'x', 0)`, [tenantId, code]);

    it('commits the work with its last statement and returns that statement\'s result', async () => {
      const t = await provisioned();
      const result = await uow.run(async (m) => {
        await insert(m, t.tenantId, 'CW1');
        return uow.commitWith(() => insert(m, t.tenantId, 'CW2').then(() => 'sent'));
      }, t.tenantId);
      expect(result).toBe('sent');
      expect([await kept(t.tenantId, 'CW1'), await kept(t.tenantId, 'CW2')]).toEqual([1, 1]);
    });

    it('a failing last statement keeps nothing: its COMMIT answers ROLLBACK and the unit fails with the statement\'s error', async () => {
      const t = await provisioned();
      await expect(uow.run(async (m) => {
        await insert(m, t.tenantId, 'CW3');
        return uow.commitWith(() => m.query(`SELECT 1 / 0`));
      }, t.tenantId)).rejects.toMatchObject({ driverError: { code: '22012' } });
      expect(await kept(t.tenantId, 'CW3')).toBe(0);
    });

    it('a statement after it is refused (a programming error), and after a recorded failure it does not commit early', async () => {
      const t = await provisioned();
      await expect(uow.run(async (m) => {
        await uow.commitWith(() => insert(m, t.tenantId, 'CW4'));
        await m.query('SELECT 1');
      }, t.tenantId)).rejects.toThrow(/after the unit of work sent its COMMIT/);
      await expect(uow.run(async (m) => {
        await insert(m, t.tenantId, 'CW5');
        uow.fail(new Error('a step failed'));
        await uow.commitWith(() => insert(m, t.tenantId, 'CW6'));
      }, t.tenantId)).rejects.toThrow('a step failed');
      expect([await kept(t.tenantId, 'CW5'), await kept(t.tenantId, 'CW6')]).toEqual([0, 0]);
    });

    it('after keepOpen it does not commit early: later statements still belong to the unit', async () => {
      const t = await provisioned();
      await uow.run(async (m) => {
        uow.keepOpen();
        await uow.commitWith(() => insert(m, t.tenantId, 'CW7'));
        await insert(m, t.tenantId, 'CW8');
      }, t.tenantId);
      expect([await kept(t.tenantId, 'CW7'), await kept(t.tenantId, 'CW8')]).toEqual([1, 1]);
    });
  });

  describe('readAhead: a read ahead of the unit of work\'s transaction', () => {
    const seen = `SELECT current_setting('transaction_read_only') AS ro, current_setting('app.tenant_id', true) AS tenant, current_user::text AS role`;

    it('before anything is sent: a read-only transaction of its own, bound to the tenant; the next statement can still be the whole transaction', async () => {
      const t = await newTenant(ctx);
      await t.get('/v1/uoms').expect(200);
      const result = await uow.run(async (m) => {
        const [ahead] = await uow.readAhead(() => m.query(seen));
        const firstAfter = uow.commitsFirstStatement;
        const [inside] = await uow.commitWith(() => m.query(seen), { onlyFirst: true });
        return { ahead, firstAfter, inside };
      }, t.tenantId);
      expect(result).toEqual({
        ahead: { ro: 'on', tenant: t.tenantId, role: 'inventory_app' },
        firstAfter: true,
        inside: { ro: 'off', tenant: t.tenantId, role: 'inventory_app' },
      });
    });

    it('a write in it fails (read-only) and keeps nothing; after a statement was sent it reads inside the transaction', async () => {
      const t = await newTenant(ctx);
      await t.get('/v1/uoms').expect(200);
      const insert = (m: EntityManager, code: string) => m.query(`INSERT INTO uoms (tenant_id, code, name, decimals) VALUES ($1, $2, 'x', 0)`, [t.tenantId, code]);
      const count = (m: EntityManager, code: string) => m.query(`SELECT count(*)::int AS n FROM uoms WHERE code = $1`, [code]);
      await expect(uow.run((m) => uow.readAhead(() => insert(m, 'RA1')), t.tenantId)).rejects.toMatchObject({ driverError: { code: '25006' } });
      // its own uncommitted row is visible to it: the read ran in the unit's transaction
      const [{ n }] = await uow.run(async (m) => {
        await insert(m, 'RA2');
        return uow.readAhead(() => count(m, 'RA2'));
      }, t.tenantId);
      expect(n).toBe(1);
      // a read ahead that fails leaves nothing open: the unit's own transaction starts cleanly after it
      const [after] = await uow.run(async (m) => {
        await expect(uow.readAhead(() => m.query('SELECT 1 / 0'))).rejects.toMatchObject({ driverError: { code: '22012' } });
        await insert(m, 'RA3');
        return uow.commitWith(() => m.query(seen), { onlyFirst: false });
      }, t.tenantId);
      expect(after).toEqual({ ro: 'off', tenant: t.tenantId, role: 'inventory_app' });
      const kept = await ctx.db.query(`SELECT code FROM uoms WHERE tenant_id = $1 AND code LIKE 'RA%' ORDER BY code`, [t.tenantId]);
      expect(kept).toEqual([{ code: 'RA2' }, { code: 'RA3' }]);
    });
  });

  it('fails closed outside a unit of work', () => {
    expect(() => uow.manager).toThrow(/No unit of work/);
    expect(() => uow.tenantId).toThrow(/No tenant context/);
  });
});
