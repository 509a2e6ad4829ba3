import { once } from 'node:events';
import { testDatabaseUrl } from '../support/app';
import { fromDist, nativeRequire } from '../support/dist';
import { startServiceProcess } from '../support/processes';
import { sleep } from '../support/matchers';
import type * as Verify from '../../src/inventory/ledger/verify.sql';

const { verifyLedger } = fromDist<typeof Verify>('inventory/ledger/verify.sql');
type PgClient = { connect(): Promise<void>; query(sql: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>; end(): Promise<void> };
const { Client } = nativeRequire('pg') as { Client: new (o: { connectionString: string }) => PgClient };

/** SIGKILL of the service during a write load leaves no partial posting: the database rolls back what was in flight. */
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
    const acknowledged: string[] = [];
    let running = true;
    const worker = async () => {
      while (running) {
        const res = await http.post('/v1/inventory/adjustments')
          .send({ itemId: items[Math.floor(Math.random() * 3)].id, locationId: location.id, qtyDelta: 1, reason: 'kill' })
          .then((r) => r, () => undefined);
        if (res?.status === 201) acknowledged.push(res.body.data.id);
        if (!res) return;
      }
    };
    const workers = Promise.all([1, 2, 3, 4].map(worker));
    await sleep(800);
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
          WHERE t.tenant_id = $1 AND t.reason = 'kill' GROUP BY t.id`, [tenant])).rows as Array<{ id: string; lines: number }>;
      expect(acknowledged.length).toBeGreaterThan(0);
      const ids = new Set(txns.map((t) => t.id));
      for (const id of acknowledged) expect(ids.has(id)).toBe(true);
      expect(txns.filter((t) => t.lines !== 1)).toEqual([]);
      expect(await verifyLedger((sql, params) => db.query(sql, params).then((r) => r.rows), tenant)).toEqual([]);
    } finally {
      await db.end();
    }
  }, 60_000);
});
