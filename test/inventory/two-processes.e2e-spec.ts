import { randomUUID } from 'node:crypto';
import type * as Verify from '../../src/inventory/ledger/verify.sql';
import { ALL, newTenant, startApp, testDatabaseUrl, TestContext } from '../support/app';
import { fromDist } from '../support/dist';
import { ServiceProcess, startServiceProcess } from '../support/processes';
import { adjust, inventoryFixture } from '../support/fixtures';
import { Client, expectWorkloadDone, mixedWorkload, statusCounts } from './workload';

const { verifyLedger } = fromDist<typeof Verify>('inventory/ledger/verify.sql');

/**
 * Two service processes on one database: the invariants hold because the database holds them,
 * not anything in one process's memory.
 */
describe('two service processes on one database', () => {
  let ctx: TestContext;
  let services: ServiceProcess[];

  beforeAll(async () => {
    ctx = await startApp(); // migrates the database and runs the test IdP the processes trust
    const env = {
      DATABASE_URL: testDatabaseUrl(),
      AUTH_MODE: 'jwt',
      IDP_ISSUER_URL: ctx.idp.issuer,
      IDP_AUDIENCE: ctx.idp.audience,
      CLAIM_NAMESPACE: ctx.idp.claimNamespace,
      DB_POOL_SIZE: '15',
    };
    services = await Promise.all([startServiceProcess(env), startServiceProcess(env)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all((services ?? []).map((s) => s.stop()));
    await ctx.close();
  });

  function clientsFor(token: string): Client[] {
    return services.map((s) => ({ post: (url: string, body?: object) => s.http.post(url).set('Authorization', `Bearer ${token}`).send(body) }));
  }

  it('40 reservations of 1 against 25 available, split over both processes: exactly 25 succeed', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 25 });
    const clients = clientsFor(t.token);
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        clients[i % 2].post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 1 }),
      ),
    );
    expect(statusCounts(results)).toEqual({ 201: 25, 409: 15 });
    expect(await verifyLedger((q, p) => ctx.db.query(q, p), t.tenantId)).toEqual([]);
  });

  it('the mixed workload over both processes keeps every invariant', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { items: [{}, {}], locations: 2 });
    const result = await mixedWorkload(clientsFor(t.token), f, { rounds: 10, perRound: 30, seed: 7 });
    expectWorkloadDone(result, 50);
    expect(await verifyLedger((q, p) => ctx.db.query(q, p), t.tenantId)).toEqual([]);
  });

  it('a brand-new tenant hitting both processes at once is provisioned exactly once', async () => {
    const tenantId = randomUUID();
    const token = await ctx.idp.token({ tenantId, permissions: ALL });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => services[i % 2].http.get('/v1/uoms').set('Authorization', `Bearer ${token}`)),
    );
    expect(statusCounts(results)).toEqual({ 200: 10 });
    const [{ n }] = await ctx.db.query(`SELECT count(*)::int AS n FROM uoms WHERE tenant_id = $1`, [tenantId]);
    expect(n).toBe(8);
  });
});
