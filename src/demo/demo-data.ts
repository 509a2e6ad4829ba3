import type { Logger } from 'pino';

/**
 * A small, realistic tenant for a first look (development + dev mode only, `DEMO_DATA=false` turns it
 * off): two warehouses with location trees, items with lots and expiry, serial numbers and UOM
 * conversions, suppliers and customers, purchase and sales orders in several states, an active bill of
 * materials and a released work order. It is loaded through the service's own HTTP API, exactly as a
 * client would (validation, the ledger, every invariant), and only into a tenant without items, so a
 * restart never loads it twice.
 */
export const DEMO = {
  facilities: 2,
  locations: 9,
  items: 6,
  suppliers: 2,
  customers: 2,
  purchaseOrders: { received: 1, sent: 1, draft: 1 },
  salesOrders: { shipped: 1, open: 1, draft: 1 },
  boms: 1,
  workOrders: { released: 1 },
} as const;

type Body = Record<string, unknown>;
type Record_ = { id: string; [key: string]: unknown };

export async function loadDemoData(baseUrl: string, log: Logger): Promise<'loaded' | 'skipped'> {
  const call = async (method: string, path: string, body?: Body): Promise<Record_> => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = (await res.json()) as { data: Record_ };
    if (!res.ok) throw new Error(`demo data: ${method} ${path} answered ${res.status}: ${JSON.stringify(json)}`);
    return json.data;
  };
  const post = (path: string, body: Body = {}) => call('POST', path, body);

  const existing = (await fetch(`${baseUrl}/v1/items?limit=1`).then((r) => r.json())) as { count: number };
  if (existing.count > 0) {
    log.info('demo data: the tenant already has items, nothing loaded');
    return 'skipped';
  }

  const uoms = (await fetch(`${baseUrl}/v1/uoms`).then((r) => r.json())) as { data: Array<{ id: string; code: string }> };
  const uom = (code: string) => uoms.data.find((u) => u.code === code)!.id;
  const statuses = (await fetch(`${baseUrl}/v1/inventory/statuses`).then((r) => r.json())) as { data: Array<{ id: string; code: string }> };
  const status = (code: string) => statuses.data.find((s) => s.code === code)!.id;

  // Two warehouses; the east one has zones with bins (a location tree), the west one bins only.
  const east = await post('/v1/facilities', { code: 'WH-EAST', name: 'East distribution centre', address: '1 Harbour Road, Eastport' });
  const west = await post('/v1/facilities', { code: 'WH-WEST', name: 'West store', address: '12 Mill Lane, Westbury' });
  const loc = (facility: Record_, code: string, name: string, parentId?: string) =>
    post(`/v1/facilities/${facility.id}/locations`, { code, name, ...(parentId ? { parentId } : {}) });
  const zoneA = await loc(east, 'A', 'Zone A (picking)');
  const a01 = await loc(east, 'A-01', 'Aisle A, bin 01', zoneA.id);
  const a02 = await loc(east, 'A-02', 'Aisle A, bin 02', zoneA.id);
  const zoneB = await loc(east, 'B', 'Zone B (bulk)');
  const b01 = await loc(east, 'B-01', 'Bulk rack 01', zoneB.id);
  const qa = await loc(east, 'QA', 'Quality hold');
  const w01 = await loc(west, 'S-01', 'Shelf 01');
  await loc(west, 'S-02', 'Shelf 02');
  await loc(west, 'DOCK', 'Receiving dock');

  // Items: plain, boxed (12 per box), lot and expiry tracked, serial tracked, a service and a product built from parts.
  const item = (itemNo: string, name: string, extra: Body = {}) => post('/v1/items', { itemNo, name, baseUomId: uom('EA'), ...extra });
  const screws = await item('SCR-M4-20', 'Machine screw M4 x 20', {
    identifiers: [{ type: 'sku', value: 'SCR-M4-20' }, { type: 'ean', value: '4006381333931' }],
    uomConversions: [{ uomId: uom('BOX'), factor: 12 }],
    attributes: [{ name: 'material', value: 'stainless steel' }],
  });
  const glue = await item('GLUE-250', 'Wood glue 250 ml', { lotTracking: 'required', expiryTracking: 'required' });
  const drill = await item('DRILL-18V', 'Cordless drill 18 V', { serialTracking: 'required', attributes: [{ name: 'voltage', value: '18 V' }] });
  const panel = await item('PANEL-OAK', 'Oak panel 60 x 40 cm');
  const shelf = await item('SHELF-KIT', 'Shelf kit (assembled)');
  await item('ASSEMBLY', 'Assembly service', { itemKind: 'service' });

  // Opening stock (adjustments), with lots and serials where the items track them.
  const adjust = (body: Body) => post('/v1/inventory/adjustments', { reason: 'opening stock', ...body });
  await adjust({ itemId: screws.id, locationId: a01.id, qtyDelta: 600 });
  await adjust({ itemId: screws.id, locationId: w01.id, qtyDelta: 120 });
  await adjust({ itemId: glue.id, locationId: a02.id, qtyDelta: 40, lotNo: 'GL-2611A', expiryDate: '2027-05-31' });
  await adjust({ itemId: glue.id, locationId: a02.id, qtyDelta: 25, lotNo: 'GL-2609C', expiryDate: '2027-02-28' });
  await adjust({ itemId: drill.id, locationId: a02.id, qtyDelta: 3, serialNos: ['DR18-0001', 'DR18-0002', 'DR18-0003'] });
  await adjust({ itemId: panel.id, locationId: b01.id, qtyDelta: 80 });
  await adjust({ itemId: panel.id, locationId: qa.id, qtyDelta: 5, statusId: status('QUARANTINE') });

  // Procurement: one order received, one sent, one still a draft.
  const acme = await post('/v1/procurement/suppliers', { code: 'ACME', name: 'Acme Fasteners', currency: 'EUR', email: 'orders@acme.example' });
  const oakworks = await post('/v1/procurement/suppliers', { code: 'OAKW', name: 'Oakworks Timber', currency: 'EUR' });
  const po = (supplier: Record_, facility: Record_, lines: Body[]) => post('/v1/procurement/purchase-orders', { supplierId: supplier.id, facilityId: facility.id, lines });
  const received = await po(acme, east, [{ itemId: screws.id, qtyOrdered: 20, uomId: uom('BOX'), unitPrice: 3.6 }]);
  for (const action of ['submit', 'approve', 'send']) await post(`/v1/procurement/purchase-orders/${received.id}/${action}`);
  const line = (received.lines as Record_[])[0];
  await post(`/v1/procurement/purchase-orders/${received.id}/receipts`, { lines: [{ poLineId: line.id, qty: 20, locationId: a01.id }] });
  const sent = await po(oakworks, east, [{ itemId: panel.id, qtyOrdered: 120, unitPrice: 14.5 }]);
  for (const action of ['submit', 'approve', 'send']) await post(`/v1/procurement/purchase-orders/${sent.id}/${action}`);
  await po(acme, west, [{ itemId: screws.id, qtyOrdered: 10, uomId: uom('BOX'), unitPrice: 3.6 }]);

  // Sales: one order shipped, one open (its stock reserved), one draft.
  const homeco = await post('/v1/sales/customers', { code: 'HOMECO', name: 'HomeCo Retail', email: 'purchasing@homeco.example' });
  const builders = await post('/v1/sales/customers', { code: 'BLDR', name: 'Northside Builders' });
  const so = (customer: Record_, lines: Body[]) => post('/v1/sales/orders', { customerId: customer.id, facilityId: east.id, lines });
  const shipped = await so(homeco, [{ itemId: screws.id, qty: 2, uomId: uom('BOX'), unitPrice: 7.9 }, { itemId: glue.id, qty: 5, unitPrice: 6.5 }]);
  await post(`/v1/sales/orders/${shipped.id}/open`);
  await post(`/v1/sales/orders/${shipped.id}/ship`);
  const open = await so(builders, [{ itemId: panel.id, qty: 20, unitPrice: 29 }, { itemId: drill.id, qty: 1, unitPrice: 139 }]);
  await post(`/v1/sales/orders/${open.id}/open`);
  await so(homeco, [{ itemId: screws.id, qty: 100, unitPrice: 0.75 }]);

  // Production: a shelf kit is 2 oak panels and 8 screws; a work order for 10 is released (components reserved).
  const bom = await post('/v1/production/boms', {
    itemId: shelf.id,
    components: [{ itemId: panel.id, qtyPer: 2 }, { itemId: screws.id, qtyPer: 8, scrapFactor: 0.05 }],
  });
  await post(`/v1/production/boms/${bom.id}/activate`);
  const wo = await post('/v1/production/work-orders', { itemId: shelf.id, qtyPlanned: 10, facilityId: east.id, outputLocationId: b01.id, dueDate: '2026-12-15' });
  await post(`/v1/production/work-orders/${wo.id}/release`);

  log.info({ demo: DEMO }, 'demo data loaded: 2 warehouses, 6 items, suppliers, customers, orders, a BOM and a work order (DEMO_DATA=false turns this off)');
  return 'loaded';
}
