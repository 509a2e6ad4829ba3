import { Client } from 'pg';
import type * as UowModule from '../../src/database/unit-of-work';
import type * as Verify from '../../src/inventory/ledger/verify.sql';
import { fromDist, nativeRequire } from '../support/dist';
import { ALL, newTenant, startApp, Tenant, TestContext, testDatabaseUrl } from '../support/app';
import { adjust, inventoryFixture } from '../support/fixtures';
import { batchMembers, batchWaiting, blockedBehind, expectNumbersGapFree, postingsByWay } from '../support/locks';
import { sleep } from '../support/matchers';

const { verifyLedger } = fromDist<typeof Verify>('inventory/ledger/verify.sql');
const { COMMIT_IN_DOUBT } = fromDist<typeof UowModule>('database/unit-of-work');
// the service's own typeorm: its DataSource class is the app's provider token
const { DataSource } = nativeRequire('typeorm') as { DataSource: abstract new (...args: never[]) => unknown };

/**
 * Group commit of one tenant's direct postings (DirectPostings, PostingBatches): adjustments that arrive
 * while another of their tenant is in flight share one transaction, one range of TX numbers and one COMMIT.
 * Proven with parallel requests against the listening service and checked in the database: batches did
 * form (several ledger transactions with one inserting transaction id, `xmin`), every 201 is exactly one
 * ledger transaction, numbers stay gap-free and unique in commit order, each posting's events carry the
 * quantities after that posting, and a posting that fails in a batch changes nothing of the others.
 */
describe('batches of direct postings', () => {
  let ctx: TestContext;
  const sql = (text: string, params?: unknown[]) => ctx.db.query(text, params);

  beforeAll(async () => {
    ctx = await startApp({ DB_POOL_SIZE: '30' });
  });
  afterAll(() => ctx.close());



  async function onHand(tenantId: string, itemId: string, locationId: string): Promise<number> {
    const [row] = await sql(`SELECT qty_on_hand::float AS q FROM balances WHERE tenant_id = $1 AND item_id = $2 AND location_id = $3`, [tenantId, itemId, locationId]);
    return row?.q ?? 0;
  }

  it('parallel adjustments share transactions; each is one ledger transaction with its own number, answer and events', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { items: Array.from({ length: 6 }, () => ({})), locations: 4 });
    const [hotItem] = f.items;
    const hot = { itemId: hotItem.id, locationId: f.locations[0].id };
    await adjust(t, { ...hot, qtyDelta: 1000 });
    for (const item of f.items.slice(1)) await adjust(t, { itemId: item.id, locationId: f.locations[1].id, qtyDelta: 5 });
    const before = await batchMembers(ctx.app, 'ledger_direct_batch_postings_total');

    // 120 at once: half ±1 on one hot balance, half +1 spread over 20 balances.
    const deltas = Array.from({ length: 120 }, (_, i) => (i % 2 === 0 ? { ...hot, qtyDelta: i % 4 === 0 ? -1 : 1 } : {
      itemId: f.items[1 + (i % 5)].id, locationId: f.locations[i % 4].id, qtyDelta: 1,
    }));
    const answers = await Promise.all(deltas.map((d) => t.post('/v1/inventory/adjustments', { ...d, reason: 'batch' })));
    expect(answers.map((a) => a.status)).toEqual(deltas.map(() => 201));

    const rows: Array<{ id: string; txn_no: string; xid: string; lines: number }> = await sql(
      `SELECT t.id, t.txn_no, t.xmin::text AS xid, (SELECT count(*)::int FROM ledger_lines l WHERE l.tenant_id = t.tenant_id AND l.transaction_id = t.id) AS lines
         FROM ledger_transactions t WHERE t.tenant_id = $1 AND t.reason = 'batch'`,
      [t.tenantId],
    );
    // every 201 is exactly one ledger transaction of one line, with the number it answered
    expect(rows).toHaveLength(120);
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const a of answers) expect(byId.get(a.body.data.id)).toMatchObject({ txn_no: a.body.data.txnNo, lines: 1 });
    // batches formed: fewer database transactions than postings, and the metric counted them
    const xids = new Set(rows.map((r) => r.xid));
    expect(xids.size).toBeLessThan(120);
    expect((await batchMembers(ctx.app, 'ledger_direct_batch_postings_total')).written - before.written).toBeGreaterThan(0);
    // within one database transaction the numbers are consecutive (one range)
    for (const xid of xids) {
      const nos = rows.filter((r) => r.xid === xid).map((r) => Number(r.txn_no.slice(3))).sort((a, b) => a - b);
      expect(nos[nos.length - 1] - nos[0]).toBe(nos.length - 1);
    }
    await expectNumbersGapFree(sql, t.tenantId, 'TX');

    // events: each posting's transaction.posted is its answer; the hot balance's stock.changed quantities,
    // in number order, are the running sum (the quantity after each posting, also inside a batch)
    const events: Array<{ type: string; subject_id: string; data: Record<string, unknown> }> = await sql(
      `SELECT type, subject_id, data FROM events WHERE tenant_id = $1 AND type IN ('transaction.posted', 'stock.changed') ORDER BY txid, seq`,
      [t.tenantId],
    );
    for (const a of answers) {
      const posted = events.filter((e) => e.type === 'transaction.posted' && e.subject_id === a.body.data.id);
      expect(posted.map((e) => e.data)).toEqual([JSON.parse(JSON.stringify(a.body.data))]);
    }
    const hotChanges = events
      .filter((e) => e.type === 'stock.changed' && e.data.itemId === hot.itemId && e.data.locationId === hot.locationId)
      .sort((a, b) => String(a.data.txnNo).localeCompare(String(b.data.txnNo)));
    expect(hotChanges.map((e) => e.data.qtyOnHand)).toEqual(hotChanges.map((_, i) => 1000 + hotChanges.slice(1, i + 1).reduce((s, e) => s + Number(e.data.qtyDelta), 0)));
    const hotSum = deltas.filter((d) => d.itemId === hot.itemId).reduce((s, d) => s + d.qtyDelta, 0);
    expect(await onHand(t.tenantId, hot.itemId, hot.locationId)).toBe(1000 + hotSum);
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it('a posting that cannot be written sends its batch the full way: it gets its own error, the others are posted once each', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { items: [{}, {}] });
    const short = { itemId: f.items[0].id, locationId: f.location.id };
    const plenty = { itemId: f.items[1].id, locationId: f.location.id };
    await adjust(t, { ...short, qtyDelta: 2 });
    await adjust(t, { ...plenty, qtyDelta: 10 });
    const before = await batchMembers(ctx.app, 'ledger_direct_batch_postings_total');

    // Hold the tenant's TX number row: the first adjustment (the leader) waits on it with its statement
    // sent; the next six queue for its tenant's next batch.
    const holder = new Client({ connectionString: testDatabaseUrl() });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM document_sequences WHERE tenant_id = $1 AND prefix = 'TX' FOR UPDATE`, [t.tenantId]);
      const [{ pid }] = (await holder.query('SELECT pg_backend_pid() AS pid')).rows;
      const leader = Promise.resolve(t.post('/v1/inventory/adjustments', { ...plenty, qtyDelta: 1, reason: 'leader' }));
      expect(await blockedBehind(sql, pid, 1)).toBeGreaterThanOrEqual(1);
      const members = [
        ...[1, 2, 3].map(() => ({ ...plenty, qtyDelta: 1 })),
        { ...short, qtyDelta: -5 }, // more than there is
        ...[1, 2].map(() => ({ ...plenty, qtyDelta: 1 })),
      ];
      const queued = members.map((m) => Promise.resolve(t.post('/v1/inventory/adjustments', { ...m, reason: 'member' })));
      await batchWaiting(ctx.app, members.length);
      await holder.query('COMMIT');
      expect((await leader).status).toBe(201);
      const answers = await Promise.all(queued);
      expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 409, 201, 201]);
      expect(answers[3].body).toMatchObject({ error: 'insufficient_stock', status: 409 });
    } finally {
      await holder.end();
    }
    // the six went as one batch, which fell back whole; then each was posted (or refused) on its own
    const after = await batchMembers(ctx.app, 'ledger_direct_batch_postings_total');
    expect(after.fellBack - before.fellBack).toBe(6);
    const [{ n }] = await sql(`SELECT count(*)::int AS n FROM ledger_transactions WHERE tenant_id = $1 AND reason = 'member'`, [t.tenantId]);
    expect(n).toBe(5);
    expect(await onHand(t.tenantId, short.itemId, short.locationId)).toBe(2);
    expect(await onHand(t.tenantId, plenty.itemId, plenty.locationId)).toBe(16);
    await expectNumbersGapFree(sql, t.tenantId, 'TX');
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it("a batch whose connection breaks after its COMMIT was sent: every member is told it may have taken effect, none is posted again", async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { items: [{}, {}, {}] });
    // y before x in the lock order (item id): the batch locks y's balance, then waits on x's
    const [a, y, x] = [f.items[0], ...f.items.slice(1).sort((p, q) => p.id.localeCompare(q.id))].map((i) => ({ itemId: i.id, locationId: f.location.id }));
    for (const key of [a, x, y]) await adjust(t, { ...key, qtyDelta: 100 });
    const txRow = new Client({ connectionString: testDatabaseUrl() });
    const xRow = new Client({ connectionString: testDatabaseUrl() });
    await Promise.all([txRow.connect(), xRow.connect()]);
    const pid = async (c: Client) => (await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
    try {
      // The leader (item a) waits on the held TX row; four queue behind it. Item x's balance held too: their
      // batch, sent when the leader is through, waits on it with its COMMIT already written behind it.
      await txRow.query('BEGIN');
      await txRow.query(`SELECT 1 FROM document_sequences WHERE tenant_id = $1 AND prefix = 'TX' FOR UPDATE`, [t.tenantId]);
      await xRow.query('BEGIN');
      await xRow.query(`SELECT 1 FROM balances WHERE tenant_id = $1 AND item_id = $2 FOR UPDATE`, [t.tenantId, x.itemId]);
      const leader = Promise.resolve(t.post('/v1/inventory/adjustments', { ...a, qtyDelta: 1, reason: 'leader' }));
      expect(await blockedBehind(sql, await pid(txRow), 1)).toBeGreaterThanOrEqual(1);
      const members = [y, x, y, y].map((key) => Promise.resolve(t.post('/v1/inventory/adjustments', { ...key, qtyDelta: 7, reason: 'in-doubt' })));
      await batchWaiting(ctx.app, 4);
      await txRow.query('COMMIT');
      expect((await leader).status).toBe(201);
      expect(await blockedBehind(sql, await pid(xRow), 1)).toBeGreaterThanOrEqual(1);
      // the batch's backend: the one waiting on item x's balance; its connection is cut
      const [batch] = await sql(`SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, [await pid(xRow)]);
      await sql('SELECT pg_terminate_backend($1)', [batch.pid]);
      const answers = await Promise.all(members);
      expect(answers.map((r) => [r.status, r.body.error, r.body.message])).toEqual(answers.map(() => [503, 'service_unavailable', COMMIT_IN_DOUBT]));
    } finally {
      await xRow.query('COMMIT').catch(() => undefined);
      await Promise.all([txRow.end(), xRow.end()]);
    }
    // the cut transaction was rolled back, and no member was posted again behind the client's back
    const [{ n }] = await sql(`SELECT count(*)::int AS n FROM ledger_transactions WHERE tenant_id = $1 AND reason = 'in-doubt'`, [t.tenantId]);
    expect(n).toBe(0);
    expect(await onHand(t.tenantId, y.itemId, y.locationId)).toBe(100);
    await expectNumbersGapFree(sql, t.tenantId, 'TX');
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it('each member is checked against the stock as the last committed change left it, not against the batch\'s older snapshot', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { items: [{}, {}] });
    const b = { itemId: f.items[0].id, locationId: f.location.id };
    const other = { itemId: f.items[1].id, locationId: f.location.id };
    await adjust(t, { ...b, qtyDelta: 5 });
    await adjust(t, { ...other, qtyDelta: 5 });
    const txRow = new Client({ connectionString: testDatabaseUrl() });
    const change = new Client({ connectionString: testDatabaseUrl() });
    await Promise.all([txRow.connect(), change.connect()]);
    const pid = async (c: Client) => (await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
    const before = await batchMembers(ctx.app, 'ledger_direct_batch_postings_total');
    let answers;
    try {
      // Another change to b's balance, not committed yet: 5 → 0 (on hand and the position's available).
      await change.query('BEGIN');
      await change.query(`UPDATE balances SET qty_on_hand = qty_on_hand - 5 WHERE tenant_id = $1 AND item_id = $2`, [t.tenantId, b.itemId]);
      await change.query(`UPDATE inventory_positions SET qty_available_on_hand = qty_available_on_hand - 5 WHERE tenant_id = $1 AND item_id = $2`, [t.tenantId, b.itemId]);
      // A leader on another item waits on the held TX row; [-3, +3] on b queue for the next batch.
      await txRow.query('BEGIN');
      await txRow.query(`SELECT 1 FROM document_sequences WHERE tenant_id = $1 AND prefix = 'TX' FOR UPDATE`, [t.tenantId]);
      const leader = Promise.resolve(t.post('/v1/inventory/adjustments', { ...other, qtyDelta: 1, reason: 'leader' }));
      expect(await blockedBehind(sql, await pid(txRow), 1)).toBeGreaterThanOrEqual(1);
      // −3 first, then +3 (the queue's order is the batch's order)
      const minus = Promise.resolve(t.post('/v1/inventory/adjustments', { ...b, qtyDelta: -3, reason: 'stale' }));
      await batchWaiting(ctx.app, 1);
      const plus = Promise.resolve(t.post('/v1/inventory/adjustments', { ...b, qtyDelta: 3, reason: 'stale' }));
      await batchWaiting(ctx.app, 2);
      const members = [minus, plus];
      await txRow.query('COMMIT');
      expect((await leader).status).toBe(201);
      // the batch's statement, its snapshot taken while b still shows 5, waits on b's balance; then the change commits
      expect(await blockedBehind(sql, await pid(change), 1)).toBeGreaterThanOrEqual(1);
      await change.query('COMMIT');
      answers = await Promise.all(members);
    } finally {
      await change.query('ROLLBACK').catch(() => undefined);
      await Promise.all([txRow.end(), change.end()]);
    }
    // 0 on hand when the batch could go on: −3 first would take b below zero before +3 put it back, so the batch
    // is not written; each then posts on its own, in whichever order they come: −3 is refused, or posted after +3.
    expect((await batchMembers(ctx.app, 'ledger_direct_batch_postings_total')).fellBack - before.fellBack).toBe(2);
    const [minusAnswer, plusAnswer] = answers;
    expect(plusAnswer.status).toBe(201);
    if (minusAnswer.status === 201) expect(minusAnswer.body.data.txnNo > plusAnswer.body.data.txnNo).toBe(true);
    else expect(minusAnswer.body).toMatchObject({ error: 'insufficient_stock', status: 409 });
    const posted: Array<{ id: string }> = await sql(`SELECT id FROM ledger_transactions WHERE tenant_id = $1 AND reason = 'stale'`, [t.tenantId]);
    expect(posted.map((r) => r.id).sort()).toEqual(answers.filter((a) => a.status === 201).map((a) => a.body.data.id).sort());
    const changes: Array<{ q: number }> = await sql(
      `SELECT (data->>'qtyOnHand')::float AS q FROM events WHERE tenant_id = $1 AND type = 'stock.changed' AND subject_id = $2`, [t.tenantId, b.itemId]);
    expect(changes.filter((c) => c.q < 0)).toEqual([]);
    expect(await onHand(t.tenantId, b.itemId, b.locationId)).toBe(minusAnswer.status === 201 ? 0 : 3);
  });

  it.each([1, 3])('%i member(s) whose connections died while they waited for their batch: each is posted on a new connection, none answers 5xx', async (count) => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { items: [{}, {}] });
    const [a, b] = f.items.map((i) => ({ itemId: i.id, locationId: f.location.id }));
    await adjust(t, { ...a, qtyDelta: 10 });
    await adjust(t, { ...b, qtyDelta: 10 });
    const txRow = new Client({ connectionString: testDatabaseUrl() });
    await txRow.connect();
    let answers;
    try {
      await txRow.query('BEGIN');
      await txRow.query(`SELECT 1 FROM document_sequences WHERE tenant_id = $1 AND prefix = 'TX' FOR UPDATE`, [t.tenantId]);
      const [{ pid }] = (await txRow.query('SELECT pg_backend_pid() AS pid')).rows;
      const leader = Promise.resolve(t.post('/v1/inventory/adjustments', { ...a, qtyDelta: 1, reason: 'leader' }));
      expect(await blockedBehind(sql, pid, 1)).toBeGreaterThanOrEqual(1);
      const members = Array.from({ length: count }, () => Promise.resolve(t.post('/v1/inventory/adjustments', { ...b, qtyDelta: 1, reason: 'handed-on' })));
      await batchWaiting(ctx.app, count);
      // The waiting members' connections (idle: nothing sent yet) are cut by the database; the leader's is busy.
      const pool = (ctx.app.get(DataSource) as unknown as { driver: { master: { _clients: Array<{ connection: { stream: { localPort: number } } }> } } }).driver.master;
      const ports = pool._clients.map((c) => c.connection.stream.localPort);
      const cut: Array<{ ok: boolean }> = await sql(
        `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE client_port = ANY($1::int[]) AND state = 'idle' AND client_addr IS NOT NULL`, [ports]);
      expect(cut.length).toBeGreaterThanOrEqual(count);
      await sleep(200); // the service sees its connections end
      await txRow.query('COMMIT');
      expect((await leader).status).toBe(201);
      answers = await Promise.all(members);
    } finally {
      await txRow.end();
    }
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 201));
    const [{ n }] = await sql(`SELECT count(*)::int AS n FROM ledger_transactions WHERE tenant_id = $1 AND reason = 'handed-on'`, [t.tenantId]);
    expect(n).toBe(count);
    await expectNumbersGapFree(sql, t.tenantId, 'TX');
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it("a process's first adjustments of balances it has never posted go the direct way too: they share transactions, none goes the full way", async () => {
    // The balances exist (made through this app); a second process has never posted them, so it knows none of
    // their items' and locations' facts: it learns each with a read of its own, then posts the direct way.
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { items: Array.from({ length: 30 }, () => ({})), locations: 1 });
    const at = f.locations[0].id;
    for (const item of f.items) await adjust(t, { itemId: item.id, locationId: at, qtyDelta: 5 });
    const cold = await startApp({ DB_POOL_SIZE: '30' });
    try {
      const there = await newTenant(cold, ALL, t.tenantId);
      const before = await postingsByWay(cold.app, 'adjustment');
      const answers = await Promise.all(f.items.map((item, i) =>
        there.post('/v1/inventory/adjustments', { itemId: item.id, locationId: at, qtyDelta: i % 2 ? 1 : -1, reason: 'cold' })));
      expect(answers.map((a) => a.status)).toEqual(f.items.map(() => 201));
      const after = await postingsByWay(cold.app, 'adjustment');
      expect({ direct: after.direct - before.direct, full: after.full - before.full }).toEqual({ direct: 30, full: 0 });
      const [row] = await sql(`SELECT count(*)::int AS n, count(DISTINCT xmin::text)::int AS xids FROM ledger_transactions WHERE tenant_id = $1 AND reason = 'cold'`, [t.tenantId]);
      expect(row.n).toBe(30);
      expect(row.xids).toBeLessThan(30);
      // each balance moved by its own adjustment only
      for (const [i, item] of f.items.entries()) expect(await onHand(t.tenantId, item.id, at)).toBe(i % 2 ? 6 : 4);
      await expectNumbersGapFree(sql, t.tenantId, 'TX');
      expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
    } finally {
      await cold.close();
    }
  });

  it('with LEDGER_BATCHES=false each posting is its own transaction', async () => {
    const alone = await startApp({ DB_POOL_SIZE: '30', LEDGER_BATCHES: 'false' });
    try {
      const t: Tenant = await newTenant(alone);
      const f = await inventoryFixture(t);
      await Promise.all(Array.from({ length: 40 }, () => t.post('/v1/inventory/adjustments', { itemId: f.items[0].id, locationId: f.location.id, qtyDelta: 1, reason: 'alone' }).expect(201)));
      const [row] = await sql(`SELECT count(*)::int AS n, count(DISTINCT xmin::text)::int AS xids FROM ledger_transactions WHERE tenant_id = $1 AND reason = 'alone'`, [t.tenantId]);
      expect(row).toEqual({ n: 40, xids: 40 });
      await expectNumbersGapFree(sql, t.tenantId, 'TX');
    } finally {
      await alone.close();
    }
  });
});
