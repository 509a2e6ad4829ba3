import { fromDist, nativeRequire } from '../support/dist';
import type * as UowModule from '../../src/database/unit-of-work';
import type * as PreparedModule from '../../src/database/prepared';
import { ALL, newTenant, startApp, TestContext } from '../support/app';
import { adjust, inventoryFixture, purchaseOrderIn } from '../support/fixtures';

/** The statements the service sends, by counting node-postgres Client.query calls in this process. */
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
  /**
   * Only the request under test is counted: the statements and writes of a connection while it runs a
   * unit of work of the tenant under test (from the BEGIN naming that tenant to the next BEGIN on the
   * connection). The expiry job, the test's own queries and any other request on other connections of
   * the pool (or in other units of work) are not.
   */
  let tenantUnderTest: string | undefined;
  const tenantOf = new WeakMap<object, string | undefined>();
  const clientOf = new WeakMap<object, object>();
  const counted = (client: object | undefined) => tenantUnderTest !== undefined && client !== undefined && tenantOf.get(client) === tenantUnderTest;
  /** The database connections (node-postgres clients) the service sent statements on. */
  const clients = new Set<{ query: (text: string) => Promise<{ rows: unknown[] }> }>();
  let writes = 0;
  const original = Client.prototype.query;
  const originalWrite = Socket.prototype._writeGeneric;
  beforeAll(async () => {
    ctx = await startApp();
    Client.prototype.query = function (this: { connection: { stream: object } }, ...args: unknown[]) {
      const q = args[0] as string | { text: string };
      const text = typeof q === 'string' ? q : q.text;
      if (text.startsWith('BEGIN')) tenantOf.set(this, /app\.tenant_id = '([^']+)'/.exec(text)?.[1]);
      if (counted(this)) sent.push(text);
      clientOf.set(this.connection.stream, this);
      clients.add(this as never);
      return original.apply(this, args);
    };
    Socket.prototype._writeGeneric = function (this: object, ...args: unknown[]) {
      if (counted(clientOf.get(this))) writes++;
      return originalWrite.apply(this, args);
    };
  });
  afterAll(async () => {
    Client.prototype.query = original;
    Socket.prototype._writeGeneric = originalWrite;
    await ctx.close();
  });

  /** The statements of `t`'s units of work while `request` runs (and `writes`: their socket writes). */
  async function statementsOf(t: { tenantId: string }, request: () => Promise<unknown>): Promise<string[]> {
    sent.length = 0;
    writes = 0;
    tenantUnderTest = t.tenantId;
    try {
      await request();
      // A read-only unit of work does not wait for its COMMIT: let it leave.
      await new Promise((r) => setTimeout(r, 20));
    } finally {
      tenantUnderTest = undefined;
    }
    return [...sent];
  }

  it('GET /v1/items/{id}: a read-only open, the one read (all children in it) and the COMMIT in one write', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await t.patch(`/v1/items/${f.item.id}`, { identifiers: [{ type: 'sku', value: `S-${f.item.id}` }], attributes: [{ name: 'colour', value: 'red' }] }).expect(200);
    const statements = await statementsOf(t, () => t.get(`/v1/items/${f.item.id}`).expect(200));
    expect(statements).toHaveLength(3);
    expect(statements[0]).toMatch(/^BEGIN READ ONLY; SET LOCAL ROLE inventory_app; SET LOCAL app.tenant_id = '/);
    expect(statements[2]).toBe('COMMIT');
    expect(writes).toBe(1);
  });

  it('counts only the request under test: statements of other requests and connections meanwhile are not counted', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const other = await newTenant(ctx);
    const g = await inventoryFixture(other);
    // Others keep the pool busy the whole time: another tenant's reads and postings, and the test's own
    // queries on the data source (as the expiry job's or another request's would).
    let busy = true;
    const noise = Promise.all([
      (async () => { while (busy) await other.get(`/v1/items/${g.item.id}`).expect(200); })(),
      (async () => { while (busy) await adjust(other, { itemId: g.item.id, locationId: g.location.id, qtyDelta: 1 }); })(),
      (async () => { while (busy) await ctx.db.query('SELECT pg_sleep(0.001)'); })(),
    ]);
    try {
      for (let i = 0; i < 5; i++) {
        const statements = await statementsOf(t, () => t.get(`/v1/items/${f.item.id}`).expect(200));
        expect(statements).toHaveLength(3);
        expect(statements[0]).toContain(`SET LOCAL app.tenant_id = '${t.tenantId}'`);
        expect(writes).toBe(1);
      }
    } finally {
      busy = false;
      await noise;
    }
  });

  it('a write inside a read-only unit of work fails in the database', async () => {
    const t = await newTenant(ctx);
    const uow = ctx.app.get(fromDist<typeof UowModule>('database/unit-of-work').UnitOfWork);
    await expect(uow.run((m) => m.query(`UPDATE tenants SET tenant_id = tenant_id`), t.tenantId, { readOnly: true }))
      .rejects.toMatchObject({ driverError: { code: '25006' } });
  });

  it('POST /v1/inventory/adjustments (untracked, counter rows existing): one write — the open, the one statement that checks and posts, and the COMMIT', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5 });
    for (const qtyDelta of [3, -2]) {
      const statements = await statementsOf(t, () => adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta }));
      expect(statements).toHaveLength(3);
      expect(writes).toBe(1);
      expect(statements[2]).toBe('COMMIT');
      // look-ups, expired holds in the way, counters (balances before positions), TX number, header and line
      expect(statements[1]).toMatch(/FROM items i[\s\S]*FROM reservations r[\s\S]*UPDATE balances[\s\S]*UPDATE inventory_positions[\s\S]*document_sequences[\s\S]*INSERT INTO ledger_transactions[\s\S]*INSERT INTO ledger_lines/);
    }
    const { body } = await t.get(`/v1/inventory/balances?itemId=${f.item.id}`).expect(200);
    expect(body.data.map((b: { qtyOnHand: number }) => b.qtyOnHand)).toEqual([6]);
  });

  it('with an Idempotency-Key: the key taken in one statement with the open, the response stored in the COMMIT\'s write — five statements in three writes', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5 }); // counter rows exist
    const body = { itemId: f.item.id, locationId: f.location.id, qtyDelta: 3, reason: 'found' };
    const key = `rt-${f.item.id}`;
    let first: { status: number; body: unknown } | undefined;
    const statements = await statementsOf(t, async () => {
      first = await ctx.http.post('/v1/inventory/adjustments').set(t.auth).set('Idempotency-Key', key).send(body);
    });
    expect(first!.status).toBe(201);
    const stored = statements.findIndex((q) => /UPDATE idempotency_keys SET status_code/.test(q));
    expect(stored).toBeGreaterThan(statements.findIndex((q) => /INSERT INTO ledger_transactions/.test(q)));
    expect(statements.slice(stored + 1)).toEqual(['COMMIT']);
    expect(statements).toHaveLength(5);
    expect(statements[1]).toMatch(/^INSERT INTO idempotency_keys[\s\S]*ON CONFLICT \(tenant_id, key\) DO UPDATE[\s\S]*WHERE k.created_at </);
    expect(statements.filter((q) => /DELETE/.test(q))).toEqual([]);
    // open + key, the posting, response + COMMIT
    expect(writes).toBe(3);
    const replay = await ctx.http.post('/v1/inventory/adjustments').set(t.auth).set('Idempotency-Key', key).send(body).expect(201);
    expect(replay.body).toEqual(first!.body);
  });

  /** A read ahead of a unit of work's transaction (UnitOfWork.readAhead): the facts a direct way lacked, in a read-only transaction of its own. */
  const expectReadAhead = (statements: string[], also: RegExp) => {
    expect(statements[0]).toMatch(/^BEGIN READ ONLY; SET LOCAL ROLE/);
    expect(statements[1]).toMatch(/^WITH i AS \(SELECT i\.id[\s\S]*FROM items i/);
    expect(statements[1]).toMatch(also);
    expect(statements[1]).not.toMatch(/FOR (KEY )?SHARE|FOR UPDATE/);
    expect(statements[2]).toBe('COMMIT');
  };

  it('the first posting of an item the process has not checked yet, to a new balance: its facts read ahead, then the full way (look-ups, the counter rows created at zero and locked, the journal with the COMMIT)', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    let created: { body: { data: { txnNo: string } } } | undefined;
    const statements = await statementsOf(t, async () => {
      created = await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5 });
    });
    expectReadAhead(statements, /FROM balances b/);
    // the read found no balance: no one statement that would write nothing
    expect(statements.filter((q) => /^WITH k AS/.test(q))).toEqual([]);
    expect(statements[3]).toMatch(/^BEGIN; SET LOCAL ROLE/);
    expect(statements.some((q) => /INSERT INTO balances[\s\S]*ON CONFLICT[\s\S]*INSERT INTO inventory_positions/.test(q))).toBe(true);
    expect(statements.at(-1)).toBe('COMMIT');
    expect(created!.body.data.txnNo).toBe('TX-000001');
  });

  it('the first posting of an item the process has not checked yet, to an existing balance (another process made it): its facts read ahead, then the one statement — two writes', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5 });
    const cold = await startApp();
    try {
      const there = await newTenant(cold, ALL, t.tenantId);
      await there.get('/v1/uoms').expect(200); // the process's first request of the tenant checks it is provisioned
      let created: { body: { data: { txnNo: string } } } | undefined;
      const statements = await statementsOf(t, async () => {
        created = await there.post('/v1/inventory/adjustments', { itemId: f.item.id, locationId: f.location.id, qtyDelta: 2, reason: 'rt' }).expect(201);
      });
      expect(statements).toHaveLength(6);
      expect(writes).toBe(2);
      expectReadAhead(statements, /FROM balances b/);
      expect(statements[3]).toMatch(/^BEGIN; SET LOCAL ROLE/);
      expect(statements[4]).toMatch(/^WITH k AS \(/);
      expect(statements[5]).toBe('COMMIT');
      expect(created!.body.data.txnNo).toBe('TX-000002');
    } finally {
      await cold.close();
    }
  });

  it('a posting to a new balance of a checked item goes the full way: the one statement writes nothing, then the look-ups, the counter rows created at zero and locked, the journal with the COMMIT', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    // The item, location and statuses are now known to the process (PostingFacts): Available stock exists.
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5 });
    let created: { body: { data: { txnNo: string } } } | undefined;
    const statements = await statementsOf(t, async () => {
      created = await adjust(t, { itemId: f.item.id, locationId: f.location.id, statusId: f.status('QUARANTINE'), qtyDelta: 5 });
    });
    expect(statements).toHaveLength(8);
    expect(statements[0]).toMatch(/^BEGIN; SET LOCAL ROLE/);
    expect(statements[1]).toMatch(/^WITH k AS \(/);
    expect(statements[2]).toBe('COMMIT');
    expect(statements[3]).toMatch(/^BEGIN; SET LOCAL ROLE/);
    // no ROLLBACK after a COMMIT: the first transaction is over
    expect(statements.filter((q) => q === 'ROLLBACK')).toEqual([]);
    expect(statements[5]).toMatch(/INSERT INTO balances[\s\S]*ON CONFLICT[\s\S]*INSERT INTO inventory_positions/);
    expect(statements[7]).toBe('COMMIT');
    // the number the first statement did not take is not skipped
    expect(created!.body.data.txnNo).toBe('TX-000002');
  });

  it('a change of the item since the process checked it sends the posting the full way (the one statement checks the versions)', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5 });
    // Deactivated: the item's version moves on; the process still remembers it active.
    await t.patch(`/v1/items/${f.item.id}`, { isActive: false }).expect(200);
    const statements = await statementsOf(t, () => t.post('/v1/inventory/adjustments', { itemId: f.item.id, locationId: f.location.id, qtyDelta: 1, reason: 'inactive' }).expect(409));
    // The one statement was tried on the remembered facts, wrote nothing (the version differs), and the
    // full way answered from fresh ones.
    expect(statements.filter((q) => /^WITH k AS/.test(q))).toHaveLength(1);
    expect(statements.findIndex((q) => /^WITH i AS/.test(q))).toBeGreaterThan(statements.findIndex((q) => /^WITH k AS/.test(q)));
  });

  it('a posting the one statement cannot judge (a lot, serials) goes the full way at once: look-ups, then the journal with the COMMIT', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { items: [{ lotTracking: 'required' }] });
    const lotItem = f.item;
    await adjust(t, { itemId: lotItem.id, locationId: f.location.id, qtyDelta: 5, lotNo: 'L1' });
    const statements = await statementsOf(t, () => adjust(t, { itemId: lotItem.id, locationId: f.location.id, qtyDelta: 2, lotNo: 'L1' }));
    expect(statements.filter((q) => /^WITH k AS/.test(q))).toEqual([]);
    expect(statements.at(-1)).toBe('COMMIT');
    expect(statements.at(-2)).toMatch(/^WITH counter_b AS[\s\S]*document_sequences[\s\S]*INSERT INTO ledger_transactions/);
    expect(statements.filter((q) => /SAVEPOINT/i.test(q))).toEqual([]);
  });

  it('POST /v1/inventory/reservations: the first at an existing position, its facility not checked yet, reads its facts ahead, then one statement; the next in one statement and one write, its event in it; at a new position, the full way', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { items: [{}, {}] });
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 10 });
    const first = await statementsOf(t, () => t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 1 }).expect(201));
    expect(first).toHaveLength(6);
    expect(writes).toBe(2);
    expectReadAhead(first, /FROM facilities[\s\S]*EXISTS \(SELECT 1 FROM inventory_positions p/);
    expect(first[4]).toMatch(/FROM items i[\s\S]*FROM inventory_positions p[\s\S]*FOR UPDATE[\s\S]*INSERT INTO reservations[\s\S]*INSERT INTO events/);
    expect(first[5]).toBe('COMMIT');

    // An item never stocked (no position): after the read, the full way — open + item, facility and position
    // (locked) in one statement, expired holds in the way, the refusal (nothing to hold), the ROLLBACK.
    const fresh = await statementsOf(t, () => t.post('/v1/inventory/reservations', { itemId: f.items[1].id, facilityId: f.facility.id, qty: 1 }).expect(409));
    expectReadAhead(fresh, /EXISTS \(SELECT 1 FROM inventory_positions p/);
    expect(fresh[3]).toMatch(/^BEGIN; SET LOCAL ROLE/);
    expect(fresh[4]).toMatch(/FROM items i[\s\S]*FROM facilities[\s\S]*pre_positions/);

    let created: { body: { data: Record<string, unknown> } } | undefined;
    const statements = await statementsOf(t, async () => {
      created = await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 2, notes: 'rt' }).expect(201);
    });
    // DirectHolds: the check, the position's lock, the counter, the number, the row and the event in one
    // statement, sent with the opening and the COMMIT (the RS number row is locked only while it commits)
    expect(statements).toHaveLength(3);
    expect(writes).toBe(1);
    expect(statements[1]).toMatch(/FROM items i[\s\S]*FROM inventory_positions p[\s\S]*FOR UPDATE[\s\S]*UPDATE inventory_positions[\s\S]*document_sequences[\s\S]*INSERT INTO reservations[\s\S]*INSERT INTO events/);
    expect(statements[2]).toBe('COMMIT');
    const data = created!.body.data;
    expect(data).toMatchObject({ status: 'open', qty: 2, qtyAllocated: 0, notes: 'rt', allocations: [], version: 1 });
    expect(data.reservationNo).toMatch(/^RS-\d{6}$/);
    // the answer built from the inserted row is what a read answers, and what its event says
    expect((await t.get(`/v1/inventory/reservations/${data.id as string}`).expect(200)).body.data).toEqual(data);
    const [event] = await ctx.db.query(`SELECT data FROM events WHERE tenant_id = $1 AND type = 'reservation.created' AND subject_id = $2`, [t.tenantId, data.id]);
    expect(event.data).toEqual(data);
  });

  describe('plan cache', () => {
    /** What pg_prepared_statements says of the statements matching `pattern`, summed over the service's connections. */
    async function plans(pattern: RegExp): Promise<{ statements: number; generic: number; custom: number }> {
      await new Promise((r) => setTimeout(r, 20)); // read-only COMMITs still on their way
      const total = { statements: 0, generic: 0, custom: 0 };
      for (const client of clients) {
        // (a closed one, of a second app a spec started and stopped, is skipped)
        const answer = await (original.call(client, 'SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements') as Promise<{
          rows: Array<{ statement: string; generic_plans: string; custom_plans: string }>;
        }>).catch(() => ({ rows: [] }));
        const { rows } = answer;
        for (const r of rows.filter((row) => pattern.test(row.statement))) {
          total.statements++;
          total.generic += Number(r.generic_plans);
          total.custom += Number(r.custom_plans);
        }
      }
      return total;
    }

    /** Runs `eight` (eight executions of each pattern's statement): each was prepared, and every one of those runs used its generic plan, none a custom one. */
    async function expectGenericOnly(patterns: RegExp[], eight: () => Promise<void>): Promise<void> {
      const before = await Promise.all(patterns.map(plans));
      await eight();
      const after = await Promise.all(patterns.map(plans));
      for (const [i, a] of after.entries()) {
        expect(a.statements).toBeGreaterThan(0);
        expect(a.custom).toBe(before[i].custom);
        expect(a.generic - before[i].generic).toBeGreaterThanOrEqual(8);
      }
    }

    it("a posting's statements are planned once per connection, not at every execution (generic plans)", async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const lots = await inventoryFixture(t, { items: [{ lotTracking: 'required' }] });
      const direct = /^WITH k AS \(/; // an adjustment's one statement
      const journal = /^WITH counter_b AS[\s\S]*INSERT INTO ledger_transactions/; // the full way's (a lot by number)
      // The item is checked once the full way (PostingFacts): from then on its adjustments are one statement.
      await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 3 });
      // Inbound and outbound, one after another: more than the five custom plans PostgreSQL tries before it
      // would choose by cost (and it would keep choosing custom plans for these statements).
      await expectGenericOnly([direct, journal], async () => {
        for (let i = 0; i < 8; i++) {
          await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: i % 2 ? -1 : 3 });
          await adjust(t, { itemId: lots.item.id, locationId: lots.location.id, qtyDelta: i % 2 ? -1 : 3, lotNo: 'L1' });
        }
      });
    });

    it("a receipt's own statements (its lines' quantities, the receipt with its GR number) are planned once per connection", async () => {
      const t = await newTenant(ctx);
      const f = await inventoryFixture(t);
      const order = await purchaseOrderIn(t, 'approved', { facilityId: f.facility.id, itemId: f.item.id, lines: [{ itemId: f.item.id, qtyOrdered: 100, unitPrice: 1 }] });
      const receive = () => t.post(`/v1/procurement/purchase-orders/${order.id}/receipts`, { lines: [{ poLineId: order.lines[0].id, qty: 1, locationId: f.location.id }] }).expect(201);
      const lines = /^UPDATE purchase_order_lines l SET qty_received/;
      const receipt = /^WITH n AS \([\s\S]*INSERT INTO receipts /;
      await receive();
      await expectGenericOnly([lines, receipt], async () => {
        for (let i = 0; i < 8; i++) await receive();
      });
    });

    it('generic plans (and nested-loop joins) are forced only for the statements that ask for them, and only inside their transaction', async () => {
      const t = await newTenant(ctx);
      const uow = ctx.app.get(fromDist<typeof UowModule>('database/unit-of-work').UnitOfWork);
      const { GENERIC, prepared } = fromDist<typeof PreparedModule>('database/prepared');
      const mode = `SELECT concat_ws('/', current_setting('plan_cache_mode'), current_setting('enable_hashjoin'), current_setting('enable_mergejoin')) AS mode`;
      const seen = await uow.run(async (m) => {
        const modes: string[] = [];
        for (const statement of [prepared(mode, GENERIC), mode, prepared(`${mode} -- again`, GENERIC), prepared(`${mode} -- listed`)]) {
          const [row] = (await m.query(statement)) as Array<{ mode: string }>;
          modes.push(row.mode);
        }
        return modes;
      }, t.tenantId);
      expect(seen).toEqual(['force_generic_plan/off/off', 'auto/on/on', 'force_generic_plan/off/off', 'auto/on/on']);
      // transaction-local: a unit of work that ends in the generic mode leaves the next one on the same
      // connection (the pool hands out the last one released) in the default mode
      const pid = `SELECT pg_backend_pid() AS pid, concat_ws('/', current_setting('plan_cache_mode'), current_setting('enable_hashjoin')) AS mode`;
      const [last] = (await uow.run((m) => m.query(prepared(pid, GENERIC)), t.tenantId)) as Array<{ pid: number; mode: string }>;
      expect(last.mode).toBe('force_generic_plan/off');
      const [next] = (await uow.run((m) => m.query(pid), t.tenantId)) as Array<{ pid: number; mode: string }>;
      expect(next.pid).toBe(last.pid);
      expect(next.mode).toBe('auto/on');
    });
  });
});
