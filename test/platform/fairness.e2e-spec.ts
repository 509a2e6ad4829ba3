import { randomUUID } from 'node:crypto';
import type * as UowModule from '../../src/database/unit-of-work';
import { fromDist, nativeRequire } from '../support/dist';
import { newTenant, startApp, Tenant, TestContext, testDatabaseUrl } from '../support/app';
import { inventoryFixture } from '../support/fixtures';
import { backendPid, blockedBehind } from '../support/locks';
import { sleep } from '../support/matchers';

type PgClient = { connect(): Promise<void>; query(sql: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>; end(): Promise<void> };
const { Client } = nativeRequire('pg') as { Client: new (o: { connectionString: string }) => PgClient };

/** Holds a row lock on an item from outside the service, so the service's requests on it are stuck. */
async function lockItem(itemId: string): Promise<PgClient> {
  const c = new Client({ connectionString: testDatabaseUrl() });
  await c.connect();
  await c.query('BEGIN');
  await c.query('SELECT 1 FROM items WHERE id = $1 FOR UPDATE', [itemId]);
  return c;
}

describe('One tenant cannot starve the others (DB_TENANT_MAX_CONNECTIONS)', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp({ DB_POOL_SIZE: '4', DB_TENANT_MAX_CONNECTIONS: '3', DB_ACQUIRE_TIMEOUT_MS: '1500', DB_LOCK_TIMEOUT_MS: '20000', DB_STATEMENT_TIMEOUT_MS: '20000' });
  });
  afterAll(() => ctx.close());

  it('a tenant with stuck requests holds at most its share; its extra request gets 503; its reads and another tenant are served meanwhile', async () => {
    const a = await newTenant(ctx);
    const b = await newTenant(ctx);
    const fa = await inventoryFixture(a);
    await b.get('/v1/uoms').expect(200);
    const locker = await lockItem(fa.item.id);
    const stuck = [1, 2, 3].map((i) => a.patch(`/v1/items/${fa.item.id}`, { name: `stuck ${i}` }).then((r) => r));
    // Staged: A's two write places are taken, both PATCHes waiting on the held row (the third waits for a place).
    const db = (text: string, params?: unknown[]) => ctx.db.query(text, params) as Promise<Array<Record<string, unknown>>>;
    const lockerPid = await backendPid(async (text, params) => (await locker.query(text, params)).rows);
    expect(await blockedBehind(db, lockerPid, 2)).toBe(2);
    // Tenant B is served while A's requests wait on the lock (A's writes hold 2 of the 4 connections: its
    // share of 3 less the place kept for its reads).
    for (let i = 0; i < 5; i++) await b.get('/v1/uoms').expect(200);
    // A's reads are served too, through the place kept for them, while its third write waits for a place.
    for (let i = 0; i < 3; i++) expect((await a.get(`/v1/items/${fa.item.id}`).expect(200)).body.data.itemNo).toBe(fa.item.itemNo);
    await sleep(1500);
    await locker.query('COMMIT');
    await locker.end();
    const statuses = (await Promise.all(stuck)).map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 503]);
    const refused = (await Promise.all(stuck)).find((r) => r.status === 503)!;
    expect(refused.body).toMatchObject({ error: 'service_unavailable', message: expect.stringMatching(/this tenant/) });
    expect(refused.headers['retry-after']).toBe('1');
  });
});

describe('No request waits on the database past DB_REQUEST_TIMEOUT_MS', () => {
  let ctx: TestContext;
  let t: Tenant;
  beforeAll(async () => {
    // No server-side limits at all: only the service's own deadline can end the wait.
    ctx = await startApp({ DB_POOL_SIZE: '3', DB_REQUEST_TIMEOUT_MS: '1000', DB_LOCK_TIMEOUT_MS: '0', DB_STATEMENT_TIMEOUT_MS: '0' });
    t = await newTenant(ctx);
  });
  afterAll(() => ctx.close());

  it('a request stuck in the database answers 503 at the deadline, its change is not kept, and the service carries on', async () => {
    const f = await inventoryFixture(t);
    const locker = await lockItem(f.item.id);
    // The lock is released only after the answer: without the deadline this request would never end.
    const res = await t.patch(`/v1/items/${f.item.id}`, { name: 'never' });
    await locker.query('COMMIT');
    await locker.end();
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ error: 'service_unavailable', message: expect.stringMatching(/within 1000 ms/) });
    expect((await t.get(`/v1/items/${f.item.id}`).expect(200)).body.data.name).not.toBe('never');
    for (let i = 0; i < 4; i++) await t.get('/v1/uoms').expect(200); // the dropped connection was replaced
    await t.patch(`/v1/items/${f.item.id}`, { name: 'after' }).expect(200);
  });

  it('a deadline reached while COMMIT is in flight answers that the outcome is unknown — and the commit did happen', async () => {
    // A deferred constraint trigger that takes 2 s at COMMIT: the 1 s deadline drops the connection while
    // the server is committing, and the server commits anyway.
    // Its own schema (not public, whose every table must be a tenant table), dropped afterwards.
    const schema = `probe_${randomUUID().slice(0, 8)}`;
    await ctx.db.query(`CREATE SCHEMA ${schema}`);
    await ctx.db.query(`CREATE TABLE ${schema}.commit_probe (id uuid PRIMARY KEY)`);
    await ctx.db.query(`GRANT USAGE ON SCHEMA ${schema} TO inventory_app; GRANT SELECT, INSERT ON ${schema}.commit_probe TO inventory_app`);
    await ctx.db.query(`CREATE FUNCTION ${schema}.slow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(2); RETURN NULL; END $$`);
    await ctx.db.query(`CREATE CONSTRAINT TRIGGER slow AFTER INSERT ON ${schema}.commit_probe DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${schema}.slow()`);
    const { UnitOfWork, COMMIT_IN_DOUBT } = fromDist<typeof UowModule>('database/unit-of-work');
    const uow = ctx.app.get(UnitOfWork);
    const id = randomUUID();
    const started = Date.now();
    try {
      await expect(uow.run((m) => m.query(`INSERT INTO ${schema}.commit_probe (id) VALUES ($1)`, [id]), t.tenantId))
        .rejects.toMatchObject({ status: 503, code: 'service_unavailable', message: COMMIT_IN_DOUBT });
      expect(Date.now() - started).toBeLessThan(1900);
      await sleep(2500);
      expect(await ctx.db.query(`SELECT id FROM ${schema}.commit_probe WHERE id = $1`, [id])).toEqual([{ id }]);
    } finally {
      await ctx.db.query(`DROP SCHEMA ${schema} CASCADE`);
    }
  });
});
