import { randomUUID } from 'node:crypto';
import type * as Verify from '../../src/inventory/ledger/verify.sql';
import { testDatabaseUrl } from '../support/app';
import { fromDist, nativeRequire } from '../support/dist';
import { ServiceProcess, startServiceProcess } from '../support/processes';

const { verifyLedger } = fromDist<typeof Verify>('inventory/ledger/verify.sql');
type PgClient = { connect(): Promise<void>; query(sql: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>; end(): Promise<void> };
const { Client } = nativeRequire('pg') as { Client: new (o: { connectionString: string }) => PgClient };

/** The service as `npm run start:dev` runs it (development, dev mode) for the dev tenant `tenant`. */
async function devService(tenant: string, env: Record<string, string> = {}): Promise<ServiceProcess> {
  return startServiceProcess({ NODE_ENV: 'development', AUTH_MODE: 'dev', DEV_TENANT_ID: tenant, DATABASE_URL: testDatabaseUrl(), ...env });
}

async function until(service: ServiceProcess, text: string): Promise<void> {
  const end = Date.now() + 60_000;
  while (!service.output().includes(text)) {
    if (Date.now() > end) throw new Error(`no "${text}" in:\n${service.output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('demo data (development, dev mode, DEMO_DATA)', () => {
  it('an empty dev tenant gets the demo tenant through the API: every kind of record, documents in several states, a whole ledger; a restart loads nothing more', async () => {
    const tenant = randomUUID();
    let service = await devService(tenant);
    try {
      await until(service, 'demo data loaded');
      const list = async (path: string) => (await service.http.get(path).expect(200)).body as { count: number; data: Array<Record<string, unknown>> };
      const statuses = async (path: string) => (await list(`${path}?limit=100`)).data.map((d) => d.status).sort();
      expect((await list('/v1/facilities')).count).toBe(2);
      const east = (await list('/v1/facilities')).data.find((f) => f.code === 'WH-EAST')!;
      // The location list is a tree: zones with their bins as children.
      type Node = Record<string, unknown> & { children: Node[] };
      const tree = (await list(`/v1/facilities/${east.id}/locations?limit=100`)).data as Node[];
      const flat = (nodes: Node[]): Node[] => nodes.flatMap((n) => [n, ...flat(n.children ?? [])]);
      const eastLocations = flat(tree);
      expect(tree.map((n) => [n.code, (n.children ?? []).map((c) => c.code)])).toEqual([['A', ['A-01', 'A-02']], ['B', ['B-01']], ['QA', []]]);
      const items = (await list('/v1/items?limit=100')).data;
      expect(items.map((i) => i.itemNo).sort()).toEqual(['ASSEMBLY', 'DRILL-18V', 'GLUE-250', 'PANEL-OAK', 'SCR-M4-20', 'SHELF-KIT']);
      expect(items.find((i) => i.itemNo === 'GLUE-250')).toMatchObject({ lotTracking: 'required', expiryTracking: 'required' });
      expect(items.find((i) => i.itemNo === 'DRILL-18V')).toMatchObject({ serialTracking: 'required' });
      expect((await list('/v1/inventory/lots?limit=100')).count).toBe(2);
      expect((await list('/v1/inventory/serials?limit=100')).count).toBe(3);
      expect((await list('/v1/procurement/suppliers')).count).toBe(2);
      expect((await list('/v1/sales/customers')).count).toBe(2);
      expect(await statuses('/v1/procurement/purchase-orders')).toEqual(['draft', 'received', 'sent']);
      expect(await statuses('/v1/sales/orders')).toEqual(['draft', 'open', 'shipped']);
      expect(await statuses('/v1/production/boms')).toEqual(['active']);
      expect(await statuses('/v1/production/work-orders')).toEqual(['released']);
      // Screws in bin A-01: 600 opening + 20 boxes of 12 received − 2 boxes shipped.
      const screws = items.find((i) => i.itemNo === 'SCR-M4-20')!;
      const a01 = eastLocations.find((l) => l.code === 'A-01')!;
      expect((await list(`/v1/inventory/balances?itemId=${screws.id}&locationId=${a01.id}`)).data.map((b) => b.qtyOnHand)).toEqual([816]);

      const db = new Client({ connectionString: testDatabaseUrl() });
      await db.connect();
      try {
        expect(await verifyLedger(async (text: string, params?: unknown[]) => (await db.query(text, params)).rows, tenant)).toEqual([]);
      } finally {
        await db.end();
      }

      await service.stop();
      service = await devService(tenant);
      await until(service, 'already has items');
      expect((await list('/v1/items?limit=100')).count).toBe(6);
      expect((await list('/v1/sales/orders')).count).toBe(3);
    } finally {
      await service.stop();
    }
  }, 120_000);

  it('DEMO_DATA=false loads nothing', async () => {
    const service = await devService(randomUUID(), { DEMO_DATA: 'false' });
    try {
      await new Promise((r) => setTimeout(r, 1000));
      expect((await service.http.get('/v1/items').expect(200)).body.count).toBe(0);
      expect(service.output()).not.toMatch(/demo data/);
    } finally {
      await service.stop();
    }
  });
});
