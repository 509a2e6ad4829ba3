import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type * as UnitOfWorkModule from '../../src/database/unit-of-work';
import { fromDist } from '../support/dist';
import { newTenant, startApp, TestContext } from '../support/app';

const { UnitOfWork } = fromDist<typeof UnitOfWorkModule>('database/unit-of-work');
const APP_ROLE = 'inventory_app';

describe('tenant isolation (row-level security)', () => {
  let ctx: TestContext;
  let uow: UnitOfWorkModule.UnitOfWork;
  beforeAll(async () => {
    ctx = await startApp();
    uow = ctx.app.get(UnitOfWork);
  });
  afterAll(() => ctx.close());

  /** A transaction as the application role, with `setup` run first (e.g. to set or clear app.tenant_id). */
  const asAppRole = <T>(work: (m: EntityManager) => Promise<T>, setup = '') =>
    ctx.db.transaction(async (m) => {
      await m.query(`SELECT set_config('role', '${APP_ROLE}', true) ${setup}`);
      return work(m);
    });

  it('every table with a tenant_id column has row-level security enabled and forced', async () => {
    const tables: Array<{ table: string; rls: boolean; forced: boolean; policies: number }> = await ctx.db.query(`
      SELECT c.relname AS table, c.relrowsecurity AS rls, c.relforcerowsecurity AS forced,
             (SELECT count(*)::int FROM pg_policy p WHERE p.polrelid = c.oid) AS policies
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped
       WHERE c.relkind IN ('r', 'p')
       ORDER BY 1`);
    expect(tables.map((t) => t.table)).toEqual(expect.arrayContaining(['tenants', 'uoms', 'stock_statuses', 'idempotency_keys', 'document_sequences', 'items']));
    const unprotected = tables.filter((t) => !t.rls || !t.forced || t.policies === 0).map((t) => t.table);
    expect(unprotected).toEqual([]);
  });

  it('every table in public is a tenant table (or the migrations table)', async () => {
    const rows: Array<{ table: string }> = await ctx.db.query(`
      SELECT c.relname AS table FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
       WHERE c.relkind IN ('r', 'p')
         AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped)`);
    expect(rows.map((r) => r.table)).toEqual(['schema_migrations']);
  });

  it(`the role ${APP_ROLE} is no superuser, cannot bypass RLS, and owns nothing`, async () => {
    const [role] = await ctx.db.query(`SELECT rolsuper, rolbypassrls, rolcanlogin, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = $1`, [APP_ROLE]);
    expect(role).toEqual({ rolsuper: false, rolbypassrls: false, rolcanlogin: false, rolcreaterole: false, rolcreatedb: false });
    const [owned] = await ctx.db.query(
      `SELECT (SELECT count(*)::int FROM pg_class WHERE relowner = r.oid) AS relations,
              (SELECT count(*)::int FROM pg_proc WHERE proowner = r.oid) AS functions,
              (SELECT count(*)::int FROM pg_namespace WHERE nspowner = r.oid) AS schemas,
              (SELECT count(*)::int FROM pg_type WHERE typowner = r.oid) AS types
         FROM pg_roles r WHERE r.rolname = $1`,
      [APP_ROLE],
    );
    expect(owned).toEqual({ relations: 0, functions: 0, schemas: 0, types: 0 });
    // and the role is a member of nothing that could give it more
    const memberOf = await ctx.db.query(
      `SELECT g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid JOIN pg_roles u ON u.oid = m.member WHERE u.rolname = $1`,
      [APP_ROLE],
    );
    expect(memberOf).toEqual([]);
  });

  it('a query with no tenant filter, run in the real unit of work, sees only its tenant', async () => {
    const a = await newTenant(ctx);
    const b = await newTenant(ctx);
    await a.post('/v1/uoms', { code: 'AONLY', name: 'A', decimals: 0 }).expect(201);
    await b.post('/v1/uoms', { code: 'BONLY', name: 'B', decimals: 0 }).expect(201);

    const seenByA = await uow.run((m) => m.query('SELECT DISTINCT tenant_id FROM uoms'), a.tenantId);
    expect(seenByA).toEqual([{ tenant_id: a.tenantId }]);
    const codesOfB: Array<{ code: string }> = await uow.run((m) => m.query(`SELECT code FROM uoms WHERE code IN ('AONLY', 'BONLY')`), b.tenantId);
    expect(codesOfB).toEqual([{ code: 'BONLY' }]);
    // the superuser connection (assertions only) sees both, so the filter above is RLS's doing
    const [{ n }] = await ctx.db.query(`SELECT count(DISTINCT tenant_id)::int AS n FROM uoms WHERE tenant_id = ANY($1)`, [[a.tenantId, b.tenantId]]);
    expect(n).toBe(2);
  });

  it('the unit of work cannot write a row of another tenant', async () => {
    const a = await newTenant(ctx);
    const b = await newTenant(ctx);
    await Promise.all([a.get('/v1/uoms').expect(200), b.get('/v1/uoms').expect(200)]);
    const write = uow.run((m) => m.query(`INSERT INTO uoms (tenant_id, code, name, decimals) VALUES ($1, 'SNEAK', 'x', 0)`, [b.tenantId]), a.tenantId);
    await expect(write).rejects.toMatchObject({ driverError: { code: '42501' } }); // new row violates row-level security policy
    const updated = await uow.run((m) => m.query(`UPDATE uoms SET name = 'hijacked' WHERE tenant_id = $1`, [b.tenantId]), a.tenantId);
    expect(updated[1]).toBe(0);
    const names = await ctx.db.query(`SELECT DISTINCT name FROM uoms WHERE tenant_id = $1 AND name = 'hijacked'`, [b.tenantId]);
    expect(names).toEqual([]);
  });

  it('without a tenant set, the application role sees zero rows, without an error', async () => {
    await newTenant(ctx).then((t) => t.get('/v1/uoms').expect(200)); // at least one tenant with rows exists
    const unset = await asAppRole((m) => m.query('SELECT count(*)::int AS n FROM uoms'));
    expect(unset).toEqual([{ n: 0 }]);
    // once a session has set app.tenant_id, a later transaction reads it as '' (not NULL): still no rows
    const empty = await asAppRole((m) => m.query('SELECT count(*)::int AS n FROM uoms'), `, set_config('app.tenant_id', '', true)`);
    expect(empty).toEqual([{ n: 0 }]);
    const tenants = await asAppRole((m) => m.query('SELECT count(*)::int AS n FROM tenants'));
    expect(tenants).toEqual([{ n: 0 }]);
  });

  it('fails closed: the manager and the tenant are refused outside a unit of work', async () => {
    expect(() => uow.manager).toThrow(/No unit of work is active/);
    expect(() => uow.tenantId).toThrow(/No tenant context/);
    // and a nested unit of work is refused rather than silently opening a second transaction
    await expect(uow.run(() => uow.run(async () => 1, randomUUID()), randomUUID())).rejects.toThrow(/already active/);
  });

  it('provisions a new tenant exactly once under 20 concurrent first requests', async () => {
    const t = await newTenant(ctx);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 4 === 0 ? t.post('/v1/uoms', { code: `P${i}`, name: `P${i}`, decimals: 0 }) : t.get('/v1/uoms'))),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([...Array(15).fill(200), ...Array(5).fill(201)]);
    for (const r of responses.filter((x) => x.status === 200)) expect(r.body.count).toBeGreaterThanOrEqual(8);
    const [counts] = await ctx.db.query(
      `SELECT (SELECT count(*)::int FROM tenants WHERE tenant_id = $1) AS tenants,
              (SELECT count(*)::int FROM uoms WHERE tenant_id = $1 AND code NOT LIKE 'P%') AS uoms,
              (SELECT count(*)::int FROM stock_statuses WHERE tenant_id = $1) AS statuses`,
      [t.tenantId],
    );
    expect(counts).toEqual({ tenants: 1, uoms: 8, statuses: 3 });
  });

  it('the database refuses a reference to another tenant’s row (composite foreign keys)', async () => {
    const a = await newTenant(ctx);
    const b = await newTenant(ctx);
    await Promise.all([a.get('/v1/uoms').expect(200), b.get('/v1/uoms').expect(200)]);
    const uomOf = async (tenantId: string) =>
      (await ctx.db.query(`SELECT id FROM uoms WHERE tenant_id = $1 AND code = 'EA'`, [tenantId]))[0].id as string;
    const insertItem = (m: EntityManager, tenantId: string, uomId: string) =>
      m.query(
        `INSERT INTO items (tenant_id, item_no, name, base_uom_id, created_by, updated_by) VALUES ($1, 'X-1', 'Cross', $2, 'test', 'test')`,
        [tenantId, uomId],
      );

    // as the superuser (no RLS): B's item pointing at A's uom
    await expect(insertItem(ctx.db.manager, b.tenantId, await uomOf(a.tenantId))).rejects.toMatchObject({
      driverError: { code: '23503' },
    });
    // the same insert with B's own uom is fine (rolled back), so the failure above is the foreign key
    const rollback = new Error('rollback');
    await expect(
      ctx.db.transaction(async (m) => {
        await insertItem(m, b.tenantId, await uomOf(b.tenantId));
        throw rollback;
      }),
    ).rejects.toBe(rollback);
  });
});
