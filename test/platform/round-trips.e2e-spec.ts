import { fromDist, nativeRequire } from '../support/dist';
import type * as UowModule from '../../src/database/unit-of-work';
import { newTenant, startApp, TestContext } from '../support/app';
import { adjust, inventoryFixture } from '../support/fixtures';

/** Every statement the service sends, by counting node-postgres Client.query calls in this process. */
const { Client } = nativeRequire('pg') as { Client: { prototype: { query: (...args: unknown[]) => unknown } } };
/** Every write to a database socket (one system call each), by counting net.Socket flushes of those sockets. */
const { Socket } = nativeRequire('node:net') as { Socket: { prototype: { _writeGeneric: (...args: unknown[]) => unknown } } };

/**
 * Round trips per request on the hot paths (the request-path budget): opening a unit of work (BEGIN with
 * the tenant and role settings) is written together with its first statement, closing it is one COMMIT
 * (not waited for on a GET), and the work between is as few statements as the request needs. A change
 * that adds a statement or a write to these paths fails here.
 */
describe('round trips per request', () => {
  let ctx: TestContext;
  const sent: string[] = [];
  const dbSockets = new WeakSet<object>();
  let writes = 0;
  const original = Client.prototype.query;
  const originalWrite = Socket.prototype._writeGeneric;
  beforeAll(async () => {
    ctx = await startApp();
    Client.prototype.query = function (this: { connection: { stream: object } }, ...args: unknown[]) {
      const q = args[0] as string | { text: string };
      sent.push(typeof q === 'string' ? q : q.text);
      dbSockets.add(this.connection.stream);
      return original.apply(this, args);
    };
    Socket.prototype._writeGeneric = function (this: object, ...args: unknown[]) {
      if (dbSockets.has(this)) writes++;
      return originalWrite.apply(this, args);
    };
  });
  afterAll(async () => {
    Client.prototype.query = original;
    Socket.prototype._writeGeneric = originalWrite;
    await ctx.close();
  });

  async function statementsOf(request: () => Promise<unknown>): Promise<string[]> {
    sent.length = 0;
    writes = 0;
    await request();
    // A read-only unit of work does not wait for its COMMIT: let it leave.
    await new Promise((r) => setTimeout(r, 20));
    return [...sent];
  }

  it('GET /v1/items/{id}: a read-only open, the one read (all children in it) and the COMMIT in one write', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await t.patch(`/v1/items/${f.item.id}`, { identifiers: [{ type: 'sku', value: `S-${f.item.id}` }], attributes: [{ name: 'colour', value: 'red' }] }).expect(200);
    const statements = await statementsOf(() => t.get(`/v1/items/${f.item.id}`).expect(200));
    expect(statements).toHaveLength(3);
    expect(statements[0]).toMatch(/^BEGIN READ ONLY; SELECT set_config\('role'/);
    expect(statements[2]).toBe('COMMIT');
    expect(writes).toBe(1);
  });

  it('a write inside a read-only unit of work fails in the database', async () => {
    const t = await newTenant(ctx);
    const uow = ctx.app.get(fromDist<typeof UowModule>('database/unit-of-work').UnitOfWork);
    await expect(uow.run((m) => m.query(`UPDATE tenants SET tenant_id = tenant_id`), t.tenantId, { readOnly: true }))
      .rejects.toMatchObject({ driverError: { code: '25006' } });
  });

  it('POST /v1/inventory/adjustments (inbound, untracked): five statements in three writes — open with the look-ups, counters locked, journal with counters and TX number sent with the COMMIT', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5 });
    const statements = await statementsOf(() => adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 3 }));
    expect(statements).toHaveLength(5);
    // the opening leaves with the first statement, the COMMIT with the last (UnitOfWork.commitWith)
    expect(writes).toBe(3);
    expect(statements[4]).toBe('COMMIT');
    // existing counter rows are locked, not rewritten: one row version per posting, written by the journal statement
    expect(statements[2]).toMatch(/JOIN balances b[\s\S]*FOR UPDATE OF b[\s\S]*JOIN inventory_positions p[\s\S]*FOR UPDATE OF p/);
    expect(statements[2]).not.toMatch(/INSERT/);
    expect(statements[3]).toMatch(/document_sequences[\s\S]*INSERT INTO ledger_transactions[\s\S]*INSERT INTO ledger_lines[\s\S]*UPDATE balances[\s\S]*UPDATE inventory_positions/);
    expect(statements.filter((s) => /SAVEPOINT/i.test(s))).toEqual([]);
  });

  it('with an Idempotency-Key the response is stored before the COMMIT, which then waits for it', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const body = { itemId: f.item.id, locationId: f.location.id, qtyDelta: 3, reason: 'found' };
    const key = `rt-${f.item.id}`;
    let first: { status: number; body: unknown } | undefined;
    const statements = await statementsOf(async () => {
      first = await ctx.http.post('/v1/inventory/adjustments').set(t.auth).set('Idempotency-Key', key).send(body);
    });
    expect(first!.status).toBe(201);
    const stored = statements.findIndex((q) => /UPDATE idempotency_keys SET status_code/.test(q));
    expect(stored).toBeGreaterThan(statements.findIndex((q) => /INSERT INTO ledger_transactions/.test(q)));
    expect(statements.slice(stored + 1)).toEqual(['COMMIT']);
    const replay = await ctx.http.post('/v1/inventory/adjustments').set(t.auth).set('Idempotency-Key', key).send(body).expect(201);
    expect(replay.body).toEqual(first!.body);
  });

  it('the first posting to a new balance adds one statement: the missing counter rows created at zero and locked', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const statements = await statementsOf(() => adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5 }));
    expect(statements).toHaveLength(6);
    expect(statements[3]).toMatch(/INSERT INTO balances[\s\S]*ON CONFLICT[\s\S]*INSERT INTO inventory_positions/);
  });

  it('an outbound adjustment adds only the look-up of expired holds in its way', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5 });
    const statements = await statementsOf(() => adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: -2 }));
    expect(statements).toHaveLength(6);
  });
});
