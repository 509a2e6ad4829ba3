import { once } from 'node:events';
import { testDatabaseUrl } from '../support/app';
import { fromDist, nativeRequire } from '../support/dist';
import { startServiceProcess } from '../support/processes';
import { sleep } from '../support/matchers';
import { blockedBehind } from '../support/locks';
import type * as Verify from '../../src/inventory/ledger/verify.sql';

const { verifyLedger } = fromDist<typeof Verify>('inventory/ledger/verify.sql');
type PgClient = { connect(): Promise<void>; query(sql: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>; end(): Promise<void> };
const { Client } = nativeRequire('pg') as { Client: new (o: { connectionString: string }) => PgClient };

/** SIGKILL of the service during a load of multi-line postings leaves no partial posting: the database rolls back what was in flight. */
describe('service killed during writes', () => {
  it('every acknowledged posting is whole, no posting is partial, every invariant holds', async () => {
    const service = await startServiceProcess({ AUTH_MODE: 'dev', DATABASE_URL: testDatabaseUrl() });
    const http = service.http;
    const uoms = (await http.get('/v1/uoms?q=EA').expect(200)).body.data as Array<{ id: string; code: string }>;
    const ea = uoms.find((u) => u.code === 'EA')!.id;
    const facility = (await http.post('/v1/facilities').send({ code: `KILL-${Date.now()}`, name: 'Kill' }).expect(201)).body.data;
    const location = (await http.post(`/v1/facilities/${facility.id}/locations`).send({ code: 'K1', name: 'K1' }).expect(201)).body.data;
    const items: Array<{ id: string }> = [];
    for (let i = 0; i < 3; i++) items.push((await http.post('/v1/items').send({ itemNo: `KILL-${Date.now()}-${i}`, name: 'k', baseUomId: ea }).expect(201)).body.data);
    for (const item of items) await http.post('/v1/inventory/adjustments').send({ itemId: item.id, locationId: location.id, qtyDelta: 100000, reason: 'stock' }).expect(201);
    const customer = (await http.post('/v1/sales/customers').send({ code: `KILL-${Date.now()}`, name: 'Kill' }).expect(201)).body.data;
    // Each worker ships sales orders of three lines (one per item): one posting of three ledger lines each.
    const acknowledged: string[] = [];
    let running = true;
    const worker = async () => {
      while (running) {
        const order = await http.post('/v1/sales/orders')
          .send({ customerId: customer.id, facilityId: facility.id, lines: items.map((item) => ({ itemId: item.id, qty: 1, unitPrice: 1 })) })
          .then((r) => (r.status === 201 ? r.body.data.id as string : undefined), () => undefined);
        if (!order) return;
        const opened = await http.post(`/v1/sales/orders/${order}/open`).then((r) => r.status, () => undefined);
        if (opened !== 200) return;
        const shipped = await http.post(`/v1/sales/orders/${order}/ship`).then((r) => r.status, () => undefined);
        if (shipped === 200) acknowledged.push(order);
        if (shipped === undefined) return;
      }
    };
    const workers = Promise.all([1, 2, 3, 4].map(worker));
    // kill once ships are going through (not after a fixed time: the machine may be slow)
    for (const deadline = Date.now() + 30_000; acknowledged.length < 3 && Date.now() < deadline; ) await sleep(20);
    expect(acknowledged.length).toBeGreaterThanOrEqual(3);
    const exited = once(service.child, 'exit');
    service.child.kill('SIGKILL');
    await exited;
    running = false;
    await workers;

    const db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    try {
      const tenant = (await db.query(`SELECT tenant_id FROM facilities WHERE id = $1`, [facility.id])).rows[0].tenant_id as string;
      // Postgres ends the killed process's transactions when their connections drop; give it a moment.
      await sleep(300);
      const txns = (await db.query(
        `SELECT t.id, count(l.*)::int AS lines FROM ledger_transactions t LEFT JOIN ledger_lines l ON l.tenant_id = t.tenant_id AND l.transaction_id = t.id
          WHERE t.tenant_id = $1 AND t.source_type = 'sales_order' GROUP BY t.id`, [tenant])).rows as Array<{ id: string; lines: number }>;
      // every acknowledged ship has its posting...
      const shipped = new Set(
        ((await db.query(`SELECT source_id FROM ledger_transactions WHERE tenant_id = $1 AND source_type = 'sales_order'`, [tenant])).rows as Array<{ source_id: string }>).map((r) => r.source_id),
      );
      for (const id of acknowledged) expect(shipped.has(id)).toBe(true);
      // ...and every posting is whole: all three lines or none
      expect(txns.length).toBeGreaterThanOrEqual(acknowledged.length);
      expect(txns.filter((t) => t.lines !== 3)).toEqual([]);
      // an order is shipped exactly when its posting is there
      const states = (await db.query(`SELECT id, status FROM sales_orders WHERE tenant_id = $1`, [tenant])).rows as Array<{ id: string; status: string }>;
      expect(states.filter((o) => (o.status === 'shipped') !== shipped.has(o.id))).toEqual([]);
      expect(await verifyLedger((sql, params) => db.query(sql, params).then((r) => r.rows), tenant)).toEqual([]);
    } finally {
      await db.end();
    }
  }, 60_000);

  it('a batch of adjustments in the middle of its statement when the service dies is kept whole or not at all', async () => {
    const service = await startServiceProcess({ AUTH_MODE: 'dev', DATABASE_URL: testDatabaseUrl(), DB_POOL_SIZE: '20', METRICS_ENABLED: 'true' });
    const http = service.http;
    const ea = ((await http.get('/v1/uoms?q=EA').expect(200)).body.data as Array<{ id: string; code: string }>).find((u) => u.code === 'EA')!.id;
    const facility = (await http.post('/v1/facilities').send({ code: `KILLB-${Date.now()}`, name: 'Kill batch' }).expect(201)).body.data;
    const location = (await http.post(`/v1/facilities/${facility.id}/locations`).send({ code: 'K1', name: 'K1' }).expect(201)).body.data;
    const items: Array<{ id: string }> = [];
    for (let i = 0; i < 3; i++) items.push((await http.post('/v1/items').send({ itemNo: `KILLB-${Date.now()}-${i}`, name: 'k', baseUomId: ea }).expect(201)).body.data);
    for (const item of items) await http.post('/v1/inventory/adjustments').send({ itemId: item.id, locationId: location.id, qtyDelta: 100, reason: 'stock' }).expect(201);
    // y before x in the lock order (item id): the batch locks y's balance, then waits on x's
    const [a, y, x] = [items[0], ...items.slice(1).sort((p, q) => p.id.localeCompare(q.id))];

    const db = new Client({ connectionString: testDatabaseUrl() });
    const txRow = new Client({ connectionString: testDatabaseUrl() });
    const xRow = new Client({ connectionString: testDatabaseUrl() });
    await Promise.all([db.connect(), txRow.connect(), xRow.connect()]);
    const rows = async (text: string, params?: unknown[]) => (await db.query(text, params)).rows;
    try {
      const tenant = (await rows(`SELECT tenant_id FROM facilities WHERE id = $1`, [facility.id]))[0].tenant_id as string;
      const counterBefore = (await rows(`SELECT last_value::int AS v FROM document_sequences WHERE tenant_id = $1 AND prefix = 'TX'`, [tenant]))[0].v as number;
      // The tenant's TX number row held: the first adjustment (on item a) waits on it, the next ones queue for
      // the tenant's next batch. Item x's balance held too: that batch, once sent, waits on it mid-statement,
      // its other balance (item y) already locked.
      await txRow.query('BEGIN');
      await txRow.query(`SELECT 1 FROM document_sequences WHERE tenant_id = $1 AND prefix = 'TX' FOR UPDATE`, [tenant]);
      await xRow.query('BEGIN');
      await xRow.query(`SELECT 1 FROM balances WHERE tenant_id = $1 AND item_id = $2 FOR UPDATE`, [tenant, x.id]);
      const pid = async (c: typeof db) => (await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      const leader = http.post('/v1/inventory/adjustments').send({ itemId: a.id, locationId: location.id, qtyDelta: 1, reason: 'leader' }).then((r) => r.status, () => 0);
      expect(await blockedBehind(rows, await pid(txRow), 1)).toBeGreaterThanOrEqual(1);
      const batch = [y, x, y, y].map((item) =>
        http.post('/v1/inventory/adjustments').send({ itemId: item.id, locationId: location.id, qtyDelta: 7, reason: 'batch' }).then((r) => r.status, () => 0));
      // the four wait in the service for the tenant's next batch (its gauge on /metrics)
      for (const start = Date.now(); ; await sleep(20)) {
        const text = (await http.get('/metrics').expect(200)).text;
        if (/^ledger_direct_batch_waiting 4$/m.test(text)) break;
        if (Date.now() - start > 20_000) throw new Error(`the four never waited for their batch:\n${text.split('\n').filter((l) => l.startsWith('ledger_direct')).join('\n')}`);
      }
      await txRow.query('COMMIT');
      expect(await leader).toBe(201);
      // the batch's statement waits on item x's balance: y's balance is locked, nothing committed
      expect(await blockedBehind(rows, await pid(xRow), 1)).toBeGreaterThanOrEqual(1);
      const waitingOnX = await rows(
        `SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)) AND query LIKE '%WITH x AS (%unnest(%'`, [await pid(xRow)]);
      expect(waitingOnX).toHaveLength(1); // the batch statement, not four single ones
      const batchBackend = waitingOnX[0].pid as number;
      const exited = once(service.child, 'exit');
      service.child.kill('SIGKILL');
      await exited;
      expect(await Promise.all(batch)).toEqual([0, 0, 0, 0]); // no answer: the connection died with the service
      await xRow.query('COMMIT');
      // the batch's backend finishes (it read its COMMIT before the connection closed) or ends with it
      for (const start = Date.now(); (await rows(`SELECT 1 FROM pg_stat_activity WHERE pid = $1`, [batchBackend])).length; await sleep(20))
        if (Date.now() - start > 20_000) throw new Error('the batch backend did not end');

      const [counts] = await rows(
        `SELECT (SELECT count(*)::int FROM ledger_transactions WHERE tenant_id = $1 AND reason = 'batch') AS txns,
                (SELECT count(*)::int FROM ledger_lines l JOIN ledger_transactions t ON t.tenant_id = l.tenant_id AND t.id = l.transaction_id
                  WHERE t.tenant_id = $1 AND t.reason = 'batch') AS lines,
                (SELECT count(*)::int FROM events WHERE tenant_id = $1 AND type = 'stock.changed' AND (data->>'qtyDelta')::numeric = 7) AS events,
                (SELECT last_value::int FROM document_sequences WHERE tenant_id = $1 AND prefix = 'TX') AS counter,
                (SELECT json_object_agg(item_id, qty_on_hand::int) FROM balances WHERE tenant_id = $1 AND item_id = ANY($2::uuid[])) AS on_hand`,
        [tenant, items.map((i) => i.id)],
      );
      // Its COMMIT left with its statement (one write), so PostgreSQL may still commit it after the service is
      // gone (it read the COMMIT before the connection closed): then all four postings are there, else none.
      const txns = counts.txns as number;
      expect([0, 4]).toContain(txns);
      const kept = txns === 4;
      expect(counts).toEqual({
        txns, lines: txns, events: txns, counter: counterBefore + 1 + txns,
        on_hand: { [a.id]: 101, [x.id]: kept ? 107 : 100, [y.id]: kept ? 121 : 100 },
      });
      expect(await verifyLedger(rows, tenant)).toEqual([]);
    } finally {
      await Promise.all([db.end(), txRow.end().catch(() => undefined), xRow.end().catch(() => undefined)]);
      if (service.child.exitCode === null) service.child.kill('SIGKILL');
    }
  }, 60_000);

  it('a batch of new reservations in the middle of its statement when the service dies is kept whole or not at all', async () => {
    const service = await startServiceProcess({ AUTH_MODE: 'dev', DATABASE_URL: testDatabaseUrl(), DB_POOL_SIZE: '20', METRICS_ENABLED: 'true' });
    const http = service.http;
    const ea = ((await http.get('/v1/uoms?q=EA').expect(200)).body.data as Array<{ id: string; code: string }>).find((u) => u.code === 'EA')!.id;
    const facility = (await http.post('/v1/facilities').send({ code: `KILLR-${Date.now()}`, name: 'Kill holds' }).expect(201)).body.data;
    const location = (await http.post(`/v1/facilities/${facility.id}/locations`).send({ code: 'K1', name: 'K1' }).expect(201)).body.data;
    const items: Array<{ id: string }> = [];
    for (let i = 0; i < 3; i++) items.push((await http.post('/v1/items').send({ itemNo: `KILLR-${Date.now()}-${i}`, name: 'k', baseUomId: ea }).expect(201)).body.data);
    const reserve = (item: { id: string }, notes: string) =>
      http.post('/v1/inventory/reservations').send({ itemId: item.id, facilityId: facility.id, qty: 2, notes }).then((r) => r.status, () => 0);
    for (const item of items) {
      await http.post('/v1/inventory/adjustments').send({ itemId: item.id, locationId: location.id, qtyDelta: 100, reason: 'stock' }).expect(201);
      expect(await reserve(item, 'first')).toBe(201); // the full way: the next ones of the item take the direct way
    }
    // y before x in the lock order (item id): the batch locks y's position, then waits on x's
    const [a, y, x] = [items[0], ...items.slice(1).sort((p, q) => p.id.localeCompare(q.id))];

    const db = new Client({ connectionString: testDatabaseUrl() });
    const rsRow = new Client({ connectionString: testDatabaseUrl() });
    const xRow = new Client({ connectionString: testDatabaseUrl() });
    await Promise.all([db.connect(), rsRow.connect(), xRow.connect()]);
    const rows = async (text: string, params?: unknown[]) => (await db.query(text, params)).rows;
    try {
      const tenant = (await rows(`SELECT tenant_id FROM facilities WHERE id = $1`, [facility.id]))[0].tenant_id as string;
      const counterBefore = (await rows(`SELECT last_value::int AS v FROM document_sequences WHERE tenant_id = $1 AND prefix = 'RS'`, [tenant]))[0].v as number;
      // The tenant's RS number row held: the first reservation (item a) waits on it, the next four queue for
      // the tenant's next batch; item x's position held too, so that batch waits on it mid-statement.
      await rsRow.query('BEGIN');
      await rsRow.query(`SELECT 1 FROM document_sequences WHERE tenant_id = $1 AND prefix = 'RS' FOR UPDATE`, [tenant]);
      await xRow.query('BEGIN');
      await xRow.query(`SELECT 1 FROM inventory_positions WHERE tenant_id = $1 AND item_id = $2 FOR UPDATE`, [tenant, x.id]);
      const pid = async (c: typeof db) => (await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      const leader = reserve(a, 'leader');
      expect(await blockedBehind(rows, await pid(rsRow), 1)).toBeGreaterThanOrEqual(1);
      const batch = [y, x, y, y].map((item) => reserve(item, 'batch'));
      for (const start = Date.now(); ; await sleep(20)) {
        const text = (await http.get('/metrics').expect(200)).text;
        if (/^ledger_reservation_batch_waiting 4$/m.test(text)) break;
        if (Date.now() - start > 20_000) throw new Error(`the four never waited for their batch:\n${text.split('\n').filter((l) => l.startsWith('ledger_reservation')).join('\n')}`);
      }
      await rsRow.query('COMMIT');
      expect(await leader).toBe(201);
      expect(await blockedBehind(rows, await pid(xRow), 1)).toBeGreaterThanOrEqual(1);
      const waitingOnX = await rows(`SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)) AND query LIKE '%WITH x AS (%unnest(%'`, [await pid(xRow)]);
      expect(waitingOnX).toHaveLength(1); // the batch statement, not four single ones
      const batchBackend = waitingOnX[0].pid as number;
      const exited = once(service.child, 'exit');
      service.child.kill('SIGKILL');
      await exited;
      expect(await Promise.all(batch)).toEqual([0, 0, 0, 0]);
      await xRow.query('COMMIT');
      for (const start = Date.now(); (await rows(`SELECT 1 FROM pg_stat_activity WHERE pid = $1`, [batchBackend])).length; await sleep(20))
        if (Date.now() - start > 20_000) throw new Error('the batch backend did not end');

      const [counts] = await rows(
        `SELECT (SELECT count(*)::int FROM reservations WHERE tenant_id = $1 AND notes = 'batch') AS held,
                (SELECT count(*)::int FROM events WHERE tenant_id = $1 AND type = 'reservation.created' AND data->>'notes' = 'batch') AS events,
                (SELECT last_value::int FROM document_sequences WHERE tenant_id = $1 AND prefix = 'RS') AS counter,
                (SELECT json_object_agg(item_id, qty_reserved::int) FROM inventory_positions WHERE tenant_id = $1 AND item_id = ANY($2::uuid[])) AS reserved`,
        [tenant, items.map((i) => i.id)],
      );
      // all four (PostgreSQL read the COMMIT that left with the statement before the connection closed) or none
      const held = counts.held as number;
      expect([0, 4]).toContain(held);
      const kept = held === 4;
      expect(counts).toEqual({ held, events: held, counter: counterBefore + 1 + held, reserved: { [a.id]: 4, [x.id]: kept ? 4 : 2, [y.id]: kept ? 8 : 2 } });
      expect(await verifyLedger(rows, tenant)).toEqual([]);
    } finally {
      await Promise.all([db.end(), rsRow.end().catch(() => undefined), xRow.end().catch(() => undefined)]);
      if (service.child.exitCode === null) service.child.kill('SIGKILL');
    }
  }, 60_000);
});
