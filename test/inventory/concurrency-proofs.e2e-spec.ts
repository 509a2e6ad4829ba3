import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { Response } from 'supertest';
import type * as UowModule from '../../src/database/unit-of-work';
import type * as LedgerModule from '../../src/inventory/ledger/ledger.service';
import type * as Verify from '../../src/inventory/ledger/verify.sql';
import { fromDist, nativeRequire } from '../support/dist';
import { newTenant, startApp, TestContext, testDatabaseUrl } from '../support/app';
import { adjust, facilityWithLocations, inventoryFixture, newCustomer, newSupplier, purchaseOrderIn, transferIn } from '../support/fixtures';
import { batchWaiting, blockedBehind } from '../support/locks';
import { statusCounts } from './workload';

const { verifyLedger } = fromDist<typeof Verify>('inventory/ledger/verify.sql');

/**
 * Concurrency where it matters, each proven with real parallel HTTP requests against the listening
 * service and then checked in the database (counts, balances, and `verifyLedger` of the tenant empty):
 * idempotency keys, a keyed request run again after a lost race, transfers, counts, requisitions,
 * document numbers and sales order opens.
 */
describe('concurrency proofs', () => {
  let ctx: TestContext;
  const sql = (text: string, params?: unknown[]) => ctx.db.query(text, params);

  beforeAll(async () => {
    ctx = await startApp({ DB_POOL_SIZE: '30' });
  });
  afterAll(() => ctx.close());

  const parallel = <T>(n: number, f: (i: number) => PromiseLike<T>) => Promise.all(Array.from({ length: n }, (_, i) => f(i)));
  const numbers = (prefix: string, from: number, to: number) =>
    Array.from({ length: to - from + 1 }, (_, i) => `${prefix}-${String(from + i).padStart(6, '0')}`);

  async function expectLedgerClean(tenantId: string) {
    expect(await verifyLedger(sql, tenantId)).toEqual([]);
  }

  async function balances(tenantId: string, itemId: string) {
    const rows: Array<{ location_id: string; on_hand: number }> = await sql(
      `SELECT location_id, qty_on_hand::float AS on_hand FROM balances WHERE tenant_id = $1 AND item_id = $2`,
      [tenantId, itemId],
    );
    return Object.fromEntries(rows.map((r) => [r.location_id, r.on_hand])) as Record<string, number>;
  }

  /**
   * Starts `requests` while the tenant's balance rows of `itemId` are locked from outside the service (a
   * superuser transaction), waits until `n` backends wait behind that lock (and `queued` adjustments wait in the
   * service for their tenant's next batch), then releases it: all the requests are in flight together before
   * any can write. Returns how many waited, and the answers.
   */
  async function behindBalanceLock(tenantId: string, itemId: string, n: number, requests: () => Array<PromiseLike<Response>>, queued = 0) {
    const holder = new Client({ connectionString: testDatabaseUrl() });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM balances WHERE tenant_id = $1 AND item_id = $2 FOR UPDATE`, [tenantId, itemId]);
      const [{ pid }] = (await holder.query('SELECT pg_backend_pid() AS pid')).rows;
      const answers = requests().map((r) => Promise.resolve(r));
      const blocked = await blockedBehind(sql, pid, n);
      if (queued) await batchWaiting(ctx.app, queued);
      await holder.query('COMMIT');
      return { blocked, results: await Promise.all(answers) };
    } finally {
      await holder.end();
    }
  }

  async function txnCount(tenantId: string, where = 'true', params: unknown[] = []): Promise<number> {
    const [{ n }] = await sql(`SELECT count(*)::int AS n FROM ledger_transactions WHERE tenant_id = $1 AND ${where}`, [tenantId, ...params]);
    return n;
  }

  it('the same Idempotency-Key on 20 parallel adjustments, all in flight at once: one posting, and all 20 answers are the same status and bytes', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 10 });
    const key = `adj-${randomUUID()}`;
    const body = { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5, reason: 'keyed' };

    // The balance row locked from outside the service: the first request's posting waits on it, so all 20 are
    // in flight together (the other 19 behind the first's key) before any of them can finish.
    const { blocked, results } = await behindBalanceLock(t.tenantId, f.item.id, 20, () =>
      Array.from({ length: 20 }, () => t.post('/v1/inventory/adjustments', body).set('Idempotency-Key', key)),
    );
    // the race happened (all 20 waited together), and every answer is the first one's
    expect({ blocked, statuses: statusCounts(results) }).toEqual({ blocked: 20, statuses: { 201: 20 } });
    const first = results[0];
    for (const r of results) {
      expect(r.text).toBe(first.text);
      expect(r.body).toEqual(first.body);
    }
    // one executed, 19 replayed
    expect(results.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(19);

    expect(await txnCount(t.tenantId, `reason = 'keyed'`)).toBe(1);
    expect(await txnCount(t.tenantId)).toBe(2);
    const [{ n: keys }] = await sql(`SELECT count(*)::int AS n FROM idempotency_keys WHERE tenant_id = $1`, [t.tenantId]);
    expect(keys).toBe(1);
    const [{ n: lines, total }] = await sql(`SELECT count(*)::int AS n, sum(qty_delta)::float AS total FROM ledger_lines WHERE tenant_id = $1`, [t.tenantId]);
    expect({ lines, total }).toEqual({ lines: 2, total: 15 });
    expect(await balances(t.tenantId, f.item.id)).toEqual({ [f.location.id]: 15 });
    const [{ id }] = await sql(`SELECT id FROM ledger_transactions WHERE tenant_id = $1 AND reason = 'keyed'`, [t.tenantId]);
    expect(first.body.data.id).toBe(id);
    await expectLedgerClean(t.tenantId);
  });

  it('keyed adjustments that lose the race for their balance run again with locks: each key posts once, refusals are exact, replays answer the same', async () => {
    const uow = ctx.app.get(fromDist<typeof UowModule>('database/unit-of-work').UnitOfWork) as unknown as {
      run<T>(work: () => Promise<T>): Promise<T>;
      manager: { query(q: string): Promise<Array<{ pid: number }>> };
      attempt: (...args: unknown[]) => Promise<unknown>;
    };
    const ledger = ctx.app.get(fromDist<typeof LedgerModule>('inventory/ledger/ledger.service').LedgerService);
    const cls = ctx.app.get((nativeRequire('nestjs-cls') as { ClsService: new () => unknown }).ClsService) as {
      run<T>(f: () => T): T;
      set(key: string, value: unknown): void;
    };
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 10 });

    // A posting of −1 that holds the balance row (uncommitted) until released.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let holding!: (pid: number) => void;
    const holderPid = new Promise<number>((r) => (holding = r));
    const holder = cls.run(() => {
      cls.set('principal', { tenantId: t.tenantId, userId: `holder-${randomUUID()}`, permissions: new Set() });
      return uow.run(async () => {
        const [{ pid }] = await uow.manager.query('SELECT pg_backend_pid() AS pid');
        await ledger.post({ type: 'adjustment', reason: 'holder', lines: [{ itemId: f.item.id, locationId: f.location.id, qty: '-1' }] });
        holding(pid);
        await gate;
      });
    });
    const pid = await holderPid;

    // Runs of a unit of work after a lost race (taking its locks first), counted while the race runs.
    const original = uow.attempt;
    let lockedRuns = 0;
    uow.attempt = function (this: unknown, ...args: unknown[]) {
      if (args[3] === true) lockedRuns++;
      return original.apply(this, args);
    };
    try {
      // 12 keyed −1 adjustments: each reads 10 on hand (the holder's −1 is not committed) and waits for the row.
      const keys = Array.from({ length: 12 }, () => `race-${randomUUID()}`);
      const body = { itemId: f.item.id, locationId: f.location.id, qtyDelta: -1, reason: 'race' };
      const send = (key: string) => t.post('/v1/inventory/adjustments', body).set('Idempotency-Key', key);
      const inFlight = keys.map((k) => send(k).then((r) => r));

      // Wait until all 12 are blocked, directly or behind each other, by the holder's connection.
      const blocked = await blockedBehind(sql, pid, keys.length);
      expect(blocked).toBe(keys.length);
      release();
      await holder;
      const results = await Promise.all(inFlight);

      // 10 − 1 leaves 9: nine succeed, three lost the race, ran again with locks and were refused exactly.
      expect(statusCounts(results)).toEqual({ 201: 9, 409: 3 });
      expect(lockedRuns).toBeGreaterThanOrEqual(3);
      for (const r of results.filter((x) => x.status === 409)) {
        expect(r.body).toMatchObject({ error: 'insufficient_stock', details: [expect.objectContaining({ requested: 1, available: 0 })] });
      }

      // Each key posted at most once (the successful ones exactly once), and its stored answer is the one given.
      const posted: Array<{ id: string }> = await sql(`SELECT id FROM ledger_transactions WHERE tenant_id = $1 AND reason = 'race'`, [t.tenantId]);
      expect(posted.map((p) => p.id).sort()).toEqual(results.filter((r) => r.status === 201).map((r) => r.body.data.id).sort());
      const stored: Array<{ key: string; status_code: number }> = await sql(`SELECT key, status_code FROM idempotency_keys WHERE tenant_id = $1`, [t.tenantId]);
      expect(stored).toHaveLength(12);
      for (const [i, key] of keys.entries()) expect(stored.find((s) => s.key === key)?.status_code).toBe(results[i].status);

      // Replays, in parallel: the same status and bytes, and nothing posted again.
      const replays = await Promise.all(keys.map(send));
      for (const [i, r] of replays.entries()) {
        expect(r.status).toBe(results[i].status);
        expect(r.text).toBe(results[i].text);
        expect(r.headers['idempotent-replayed']).toBe('true');
      }
      expect(await txnCount(t.tenantId)).toBe(1 + 1 + 9);
      expect(await balances(t.tenantId, f.item.id)).toEqual({ [f.location.id]: 0 });
      await expectLedgerClean(t.tenantId);
    } finally {
      uow.attempt = original;
      release();
    }
  });

  it('parallel ships and receives of one transfer: only valid transitions succeed, once each', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const to = await facilityWithLocations(t, 1);
    const draft = await transferIn(t, f, 'draft', { qty: 4, to });
    const url = `/v1/inventory/transfers/${draft.id}`;

    const results = await parallel(16, (i) => t.post(`${url}/${i % 2 ? 'receive' : 'ship'}`));
    const ships = results.filter((_, i) => i % 2 === 0);
    const receives = results.filter((_, i) => i % 2 === 1);
    expect(statusCounts(ships)).toEqual({ 200: 1, 409: 7 });
    const received = receives.filter((r) => r.status === 200).length;
    expect(received).toBeLessThanOrEqual(1);
    for (const r of results.filter((x) => x.status !== 200)) expect(r.body.error).toBe('invalid_state');
    expect(statusCounts(receives)[500]).toBeUndefined();
    expect(received + (statusCounts(receives)[409] ?? 0)).toBe(8);

    const mid = (await t.get(url).expect(200)).body.data;
    expect(mid.status).toBe(received ? 'received' : 'shipped');
    const [{ n: ledgerMid }] = await sql(`SELECT count(*)::int AS n FROM ledger_transactions WHERE tenant_id = $1 AND source_id = $2`, [t.tenantId, draft.id]);
    expect(ledgerMid).toBe(1 + received);
    if (!received) await t.post(`${url}/receive`).expect(200);

    // once more in parallel: a received transfer refuses both
    expect(statusCounts(await parallel(6, (i) => t.post(`${url}/${i % 2 ? 'receive' : 'ship'}`)))).toEqual({ 409: 6 });
    const types: Array<{ type: string }> = await sql(`SELECT type FROM ledger_transactions WHERE tenant_id = $1 AND source_id = $2 ORDER BY txn_no`, [t.tenantId, draft.id]);
    expect(types.map((x) => x.type)).toEqual(['transfer_out', 'transfer_in']);
    expect(await balances(t.tenantId, f.item.id)).toEqual({ [f.location.id]: 0, [to.location.id]: 4 });
    await expectLedgerClean(t.tenantId);
  });

  it('transfers competing for the same stock: exactly the ones that fit ship, and stock never goes negative', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const to = await facilityWithLocations(t, 1);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 10 });
    const drafts = [];
    for (let i = 0; i < 8; i++) drafts.push(await transferIn(t, f, 'draft', { qty: 3, to, stock: false }));

    // 8 × 3 = 24 wanted, 10 on hand: three fit.
    const results = await Promise.all(drafts.map((d) => t.post(`/v1/inventory/transfers/${d.id}/ship`)));
    expect(statusCounts(results)).toEqual({ 200: 3, 409: 5 });
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.error).toBe('insufficient_stock');

    const shippedIds = drafts.filter((_, i) => results[i].status === 200).map((d) => d.id);
    const rows: Array<{ id: string; status: string }> = await sql(`SELECT id, status FROM transfer_orders WHERE tenant_id = $1`, [t.tenantId]);
    expect(rows.filter((r) => r.status === 'shipped').map((r) => r.id).sort()).toEqual([...shippedIds].sort());
    expect(rows.filter((r) => r.status === 'draft')).toHaveLength(5);
    expect(await txnCount(t.tenantId, `type = 'transfer_out'`)).toBe(3);
    expect(await balances(t.tenantId, f.item.id)).toEqual({ [f.location.id]: 1 });
    const [{ n: negative }] = await sql(`SELECT count(*)::int AS n FROM balances WHERE tenant_id = $1 AND qty_on_hand < 0`, [t.tenantId]);
    expect(negative).toBe(0);
    await expectLedgerClean(t.tenantId);
  });

  it('a count completion racing adjustments on its key: the count sets its quantity at its place in the order, the adjustments apply around it', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 20 });
    const session = (await t.post('/v1/inventory/count-sessions', { facilityId: f.facility.id }).expect(201)).body.data;
    const S = `/v1/inventory/count-sessions/${session.id}`;
    await t.post(`${S}/lines`, { lines: [{ itemId: f.item.id, locationId: f.location.id, countedQty: 50 }] }).expect(200);

    // 6 × +2 and 6 × −1 with the completion (never below zero in any order), all in flight together: the
    // completion and the first adjustment wait behind the balance row, the other eleven wait in the service
    // for the tenant's next batch of direct postings (DirectPostings).
    const deltas = Array.from({ length: 12 }, (_, i) => (i % 2 ? -1 : 2));
    const { blocked, results } = await behindBalanceLock(t.tenantId, f.item.id, 2, () => [
      t.post(`${S}/complete`),
      ...deltas.map((qtyDelta) => t.post('/v1/inventory/adjustments', { itemId: f.item.id, locationId: f.location.id, qtyDelta, reason: 'around' })),
    ], 11);
    const [completed, ...adjusted] = results;
    expect({ blocked, count: completed.status, adjustments: statusCounts(adjusted) }).toEqual({ blocked: 2, count: 200, adjustments: { 201: 12 } });
    const done = completed.body.data;
    expect(done.status).toBe('completed');

    // The serial order of the postings on the balance is their TX number order (taken while the balance row is locked).
    const order: Array<{ id: string; type: string; qty: number }> = await sql(
      `SELECT t.id, t.type, l.qty_delta::float AS qty FROM ledger_transactions t JOIN ledger_lines l ON l.tenant_id = t.tenant_id AND l.transaction_id = t.id
        WHERE t.tenant_id = $1 ORDER BY t.txn_no`,
      [t.tenantId],
    );
    expect(order).toHaveLength(1 + 12 + 1);
    const at = order.findIndex((o) => o.type === 'count');
    expect(order[at].id).toBe(done.transactionId);
    const before = order.slice(0, at).reduce((s, o) => s + o.qty, 0);
    const after = order.slice(at + 1).reduce((s, o) => s + o.qty, 0);
    // The count saw exactly what was posted before it and set it to 50; the later adjustments applied on top.
    expect(done.lines[0]).toMatchObject({ countedQty: 50, systemQty: before, varianceQty: 50 - before });
    expect(order[at].qty).toBe(50 - before);
    expect(await balances(t.tenantId, f.item.id)).toEqual({ [f.location.id]: 50 + after });
    expect(await txnCount(t.tenantId, `type = 'count'`)).toBe(1);
    await expectLedgerClean(t.tenantId);
  });

  it('a requisition converted twice in parallel: one 200, one 409, one set of purchase orders', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const [acme, bolt] = [await newSupplier(t), await newSupplier(t)];
    const R = '/v1/procurement/requisitions';
    const reqs = [];
    for (let i = 0; i < 3; i++) {
      const lines = [
        { itemId: f.item.id, qty: 5, supplierId: acme.id },
        { itemId: f.item.id, qty: 2, supplierId: bolt.id },
      ];
      const r = (await t.post(R, { facilityId: f.facility.id, lines }).expect(201)).body.data;
      await t.post(`${R}/${r.id}/submit`).expect(200);
      await t.post(`${R}/${r.id}/approve`).expect(200);
      reqs.push(r);
    }
    // every requisition twice, all at once
    const results = await Promise.all(reqs.flatMap((r) => [t.post(`${R}/${r.id}/convert`), t.post(`${R}/${r.id}/convert`)]));
    for (const [i, r] of reqs.entries()) {
      const pair = results.slice(2 * i, 2 * i + 2);
      expect(statusCounts(pair)).toEqual({ 200: 1, 409: 1 });
      const won = pair.find((x) => x.status === 200)!;
      expect(pair.find((x) => x.status === 409)!.body.error).toBe('invalid_state');
      const pos: Array<{ id: string; supplier_id: string }> = await sql(
        `SELECT id, supplier_id FROM purchase_orders WHERE tenant_id = $1 AND requisition_id = $2`,
        [t.tenantId, r.id],
      );
      expect(pos.map((p) => p.supplier_id).sort()).toEqual([acme.id, bolt.id].sort());
      expect(won.body.data.purchaseOrderIds.sort()).toEqual(pos.map((p) => p.id).sort());
      expect((await t.get(`${R}/${r.id}`).expect(200)).body.data.status).toBe('ordered');
    }
    const poNos: Array<{ po_no: string }> = await sql(`SELECT po_no FROM purchase_orders WHERE tenant_id = $1 ORDER BY po_no`, [t.tenantId]);
    expect(poNos.map((p) => p.po_no)).toEqual(numbers('PO', 1, 6));
    const [{ n: lines }] = await sql(`SELECT count(*)::int AS n FROM purchase_order_lines WHERE tenant_id = $1`, [t.tenantId]);
    expect(lines).toBe(6);
    await expectLedgerClean(t.tenantId);
  });

  it('gap-free numbers under 20 parallel creates of every document prefix', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const to = await facilityWithLocations(t, 1);
    const supplier = await newSupplier(t);
    const customer = await newCustomer(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 100 });
    const part = f.item;
    const out = (await t.post('/v1/items', { itemNo: `OUT-${randomUUID().slice(0, 8)}`, name: 'made', baseUomId: f.uom('EA') }).expect(201)).body.data;
    const bom = (await t.post('/v1/production/boms', { itemId: out.id, components: [{ itemId: part.id, qtyPer: 1 }] }).expect(201)).body.data;
    await t.post(`/v1/production/boms/${bom.id}/activate`).expect(200);
    // one order sent with 20 open, for 20 receipts of 1
    const order = await purchaseOrderIn(t, 'sent', { facilityId: f.facility.id, supplierId: supplier.id, lines: [{ itemId: part.id, qtyOrdered: 20, unitPrice: 1 }] });

    const cases: Array<{ prefix: string; table: string; column: string; field: string; create: () => PromiseLike<Response> }> = [
      { prefix: 'PO', table: 'purchase_orders', column: 'po_no', field: 'poNo', create: () => t.post('/v1/procurement/purchase-orders', { supplierId: supplier.id, facilityId: f.facility.id, lines: [{ itemId: part.id, qtyOrdered: 1, unitPrice: 1 }] }) },
      { prefix: 'SO', table: 'sales_orders', column: 'order_no', field: 'orderNo', create: () => t.post('/v1/sales/orders', { customerId: customer.id, facilityId: f.facility.id, lines: [{ itemId: part.id, qty: 1, unitPrice: 1 }] }) },
      { prefix: 'TO', table: 'transfer_orders', column: 'transfer_no', field: 'transferNo', create: () => t.post('/v1/inventory/transfers', { fromFacilityId: f.facility.id, toFacilityId: to.facility.id, lines: [{ itemId: part.id, qty: 1, fromLocationId: f.location.id, toLocationId: to.location.id }] }) },
      { prefix: 'WO', table: 'work_orders', column: 'wo_no', field: 'woNo', create: () => t.post('/v1/production/work-orders', { itemId: out.id, qtyPlanned: 1, facilityId: f.facility.id }) },
      { prefix: 'RQ', table: 'requisitions', column: 'req_no', field: 'reqNo', create: () => t.post('/v1/procurement/requisitions', { facilityId: f.facility.id, lines: [{ itemId: part.id, qty: 1 }] }) },
      { prefix: 'GR', table: 'receipts', column: 'receipt_no', field: 'receiptNo', create: () => t.post(`/v1/procurement/purchase-orders/${order.id}/receipts`, { lines: [{ poLineId: order.lines[0].id, qty: 1, locationId: f.location.id }] }) },
      { prefix: 'CS', table: 'count_sessions', column: 'session_no', field: 'sessionNo', create: () => t.post('/v1/inventory/count-sessions', { facilityId: f.facility.id }) },
      { prefix: 'TX', table: 'ledger_transactions', column: 'txn_no', field: 'txnNo', create: () => t.post('/v1/inventory/adjustments', { itemId: part.id, locationId: f.location.id, qtyDelta: 1, reason: 'numbers' }) },
      { prefix: 'RS', table: 'reservations', column: 'reservation_no', field: 'reservationNo', create: () => t.post('/v1/inventory/reservations', { itemId: part.id, facilityId: f.facility.id, qty: 1 }) },
    ];
    for (const c of cases) {
      const [{ n: before }] = await sql(`SELECT count(*)::int AS n FROM ${c.table} WHERE tenant_id = $1`, [t.tenantId]);
      const results = await parallel(20, c.create);
      expect({ prefix: c.prefix, statuses: statusCounts(results) }).toEqual({ prefix: c.prefix, statuses: { 201: 20 } });
      const rows: Array<{ no: string }> = await sql(`SELECT ${c.column} AS no FROM ${c.table} WHERE tenant_id = $1 ORDER BY ${c.column}`, [t.tenantId]);
      // every number of the tenant 1..n, no gap, no duplicate; the 20 answers hold the last 20
      expect({ prefix: c.prefix, numbers: rows.map((r) => r.no) }).toEqual({ prefix: c.prefix, numbers: numbers(c.prefix, 1, before + 20) });
      expect(results.map((r) => r.body.data[c.field]).sort()).toEqual(numbers(c.prefix, before + 1, before + 20));
      const [{ last }] = await sql(`SELECT last_value::int AS last FROM document_sequences WHERE tenant_id = $1 AND prefix = $2`, [t.tenantId, c.prefix]);
      expect(last).toBe(before + 20);
    }
    await expectLedgerClean(t.tenantId);
  }, 300_000);

  it('20 parallel opens of sales orders competing for 7 in stock: exactly 7 open, reservations and positions agree', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 7 });
    const customer = await newCustomer(t);
    const orders = [];
    for (let i = 0; i < 20; i++) {
      orders.push((await t.post('/v1/sales/orders', { customerId: customer.id, facilityId: f.facility.id, lines: [{ itemId: f.item.id, qty: 1, unitPrice: 3 }] }).expect(201)).body.data);
    }
    const results = await Promise.all(orders.map((o) => t.post(`/v1/sales/orders/${o.id}/open`)));
    expect(statusCounts(results)).toEqual({ 200: 7, 409: 13 });
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.error).toBe('insufficient_stock');

    const opened = orders.filter((_, i) => results[i].status === 200).map((o) => o.id).sort();
    const rows: Array<{ id: string; status: string }> = await sql(`SELECT id, status FROM sales_orders WHERE tenant_id = $1`, [t.tenantId]);
    expect(rows.filter((r) => r.status === 'open').map((r) => r.id).sort()).toEqual(opened);
    expect(rows.filter((r) => r.status === 'draft')).toHaveLength(13);
    const reservations: Array<{ qty: number }> = await sql(`SELECT qty::float AS qty FROM reservations WHERE tenant_id = $1 AND status = 'open'`, [t.tenantId]);
    expect(reservations).toHaveLength(7);
    const [position] = await sql(
      `SELECT qty_available_on_hand::float AS on_hand, qty_reserved::float AS reserved FROM inventory_positions WHERE tenant_id = $1 AND item_id = $2`,
      [t.tenantId, f.item.id],
    );
    expect(position).toEqual({ on_hand: 7, reserved: 7 });
    const [{ n: linked }] = await sql(`SELECT count(*)::int AS n FROM sales_order_lines WHERE tenant_id = $1 AND reservation_id IS NOT NULL`, [t.tenantId]);
    expect(linked).toBe(7);
    await expectLedgerClean(t.tenantId);
  }, 120_000);
});


