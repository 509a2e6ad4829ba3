import type * as RepositoryModule from '../../src/database/tenant-repository';
import type * as FacilityModule from '../../src/catalog/facilities/facility.entity';
import { fromDist } from '../support/dist';
import { newTenant, startApp, TestContext } from '../support/app';

const { TenantRepository } = fromDist<typeof RepositoryModule>('database/tenant-repository');
const { Facility } = fromDist<typeof FacilityModule>('catalog/facilities/facility.entity');

/**
 * A tenant repository carries tenant_id on every call by itself. Proven here without row-level
 * security: the test's connection is the superuser's, which sees every tenant's rows, so only the
 * repository's own condition keeps another tenant's rows out.
 */
describe('tenant repositories', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  it('finds, counts, updates, deletes and query-builds only its own tenant\'s rows, and inserts into its own tenant', async () => {
    const [a, b] = [await newTenant(ctx), await newTenant(ctx)];
    const mine = (await a.post('/v1/facilities', { code: 'MINE', name: 'Mine' }).expect(201)).body.data;
    const theirs = (await b.post('/v1/facilities', { code: 'THEIRS', name: 'Theirs' }).expect(201)).body.data;
    const repo = new TenantRepository(ctx.db.getRepository(Facility), a.tenantId);
    // The superuser's connection sees both.
    expect(await ctx.db.getRepository(Facility).countBy({ id: theirs.id })).toBe(1);

    expect((await repo.find()).map((f) => f.id)).toEqual([mine.id]);
    expect(await repo.findOne({ id: theirs.id })).toBeNull();
    expect((await repo.findOne({ id: mine.id }))?.code).toBe('MINE');
    expect(await repo.findBy([{ code: 'THEIRS' }, { code: 'MINE' }])).toHaveLength(1);
    expect(await repo.count()).toBe(1);
    // A query builder's `where` adds to the tenant's condition; it cannot replace it.
    expect(await repo.createQueryBuilder('f').where('f.code = :code', { code: 'THEIRS' }).getMany()).toEqual([]);
    expect(await repo.createQueryBuilder('f').where('f.code = :code', { code: 'MINE' }).getCount()).toBe(1);

    expect(await repo.update({ id: theirs.id }, { name: 'taken over' })).toBe(0);
    expect((await b.get(`/v1/facilities/${theirs.id}`).expect(200)).body.data.name).toBe('Theirs');
    expect(await repo.delete({ id: theirs.id })).toBe(0);

    // Whatever tenant a caller smuggles into the values, the row is the repository's tenant's.
    const id = '00000000-0000-4000-8000-00000000abcd';
    await repo.insert({ id, code: 'NEW', name: 'New', type: 'store', address: null, isActive: true, createdBy: 't', updatedBy: 't', ...({ tenantId: b.tenantId } as object) });
    const [row] = await ctx.db.query(`SELECT tenant_id FROM facilities WHERE id = $1`, [id]);
    expect(row.tenant_id).toBe(a.tenantId);
    expect(await repo.delete({ id })).toBe(1);
  });
});
