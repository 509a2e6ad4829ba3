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

  it('fails closed outside a unit of work', () => {
    expect(() => uow.manager).toThrow(/No unit of work/);
    expect(() => uow.tenantId).toThrow(/No tenant context/);
  });
});
