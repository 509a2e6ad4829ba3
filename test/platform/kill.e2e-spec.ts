import { once } from 'node:events';
import { testDatabaseUrl } from '../support/app';
import { fromDist, nativeRequire } from '../support/dist';
import { startServiceProcess } from '../support/processes';
import { sleep } from '../support/matchers';
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
});
