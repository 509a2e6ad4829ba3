import { newTenant, PLATFORMS, startApp, Tenant, TestContext } from '../support/app';
import { Db, drainFeed } from '../support/feed';
import {
  adjust, countSessionIn, facilityWithLocations, inventoryFixture, newCustomer, newItem, newSupplier, purchaseOrderIn, reservationIn, salesOrderIn, short, tenantWithStock, transferIn,
} from '../support/fixtures';

type Stock = Awaited<ReturnType<typeof tenantWithStock>>;
interface Request {
  url: string;
  body?: object;
}
interface Case {
  /** The resource event (`<resource>.<created|updated>`), or none for a ledger posting alone. */
  event?: string;
  action?: string;
  /** How many ledger transactions the request posts (each: transaction.posted and its stock.changed). */
  postings?: number;
  make(s: Stock): Promise<Request>;
}

const WO = '/v1/production/work-orders';
async function workOrder(s: Stock, release: boolean) {
  const t = s.t;
  const output = await newItem(t, s.uom('EA'));
  const bom = (await t.post('/v1/production/boms', { itemId: output.id, components: [{ itemId: s.item.id, qtyPer: 1 }] }).expect(201)).body.data;
  await t.post(`/v1/production/boms/${bom.id}/activate`, {}).expect(200);
  const wo = (await t.post(WO, { itemId: output.id, qtyPlanned: 1, facilityId: s.facility.id }).expect(201)).body.data;
  if (release) await t.post(`${WO}/${wo.id}/release`, {}).expect(200);
  return wo as { id: string };
}
const draftRequisition = async (s: Stock) =>
  (await s.t.post('/v1/procurement/requisitions', { facilityId: s.facility.id, lines: [{ itemId: s.item.id, qty: 1, supplierId: (await newSupplier(s.t)).id }] }).expect(201)).body.data
    .id as string;
async function requisitionIn(s: Stock, steps: string[]) {
  const id = await draftRequisition(s);
  for (const step of steps) await s.t.post(`/v1/procurement/requisitions/${id}/${step}`, {}).expect(200);
  return id;
}

/**
 * Every POST and PATCH route of the OpenAPI description, with a valid request on fresh records, and the
 * events it must write. A route missing here fails the walk: a new write route must say what it emits.
 */
const CASES: Record<string, Case> = {
  'POST /v1/uoms': { event: 'uom.created', action: 'create', make: async () => ({ url: '/v1/uoms', body: { code: `U${short()}`, name: 'Unit', decimals: 0 } }) },
  'POST /v1/items': { event: 'item.created', action: 'create', make: async (s) => ({ url: '/v1/items', body: { itemNo: `IT-${short()}`, name: 'Thing', baseUomId: s.uom('EA') } }) },
  'PATCH /v1/items/{id}': { event: 'item.updated', action: 'patch', make: async (s) => ({ url: `/v1/items/${(await newItem(s.t, s.uom('EA'))).id}`, body: { name: 'renamed' } }) },
  'POST /v1/facilities': { event: 'facility.created', action: 'create', make: async () => ({ url: '/v1/facilities', body: { code: `F-${short()}`, name: 'Depot' } }) },
  'PATCH /v1/facilities/{id}': { event: 'facility.updated', action: 'patch', make: async (s) => ({ url: `/v1/facilities/${(await facilityWithLocations(s.t, 0)).facility.id}`, body: { name: 'renamed' } }) },
  'POST /v1/facilities/{facilityId}/locations': {
    event: 'location.created', action: 'create', make: async (s) => ({ url: `/v1/facilities/${s.facility.id}/locations`, body: { code: `L-${short()}`, name: 'Bin' } }),
  },
  'PATCH /v1/facilities/{facilityId}/locations/{locationId}': {
    event: 'location.updated', action: 'patch', make: async (s) => ({ url: `/v1/facilities/${s.facility.id}/locations/${s.locations[1].id}`, body: { name: `Bin ${short()}` } }),
  },
  'POST /v1/inventory/adjustments': { postings: 1, make: async (s) => ({ url: '/v1/inventory/adjustments', body: { itemId: s.item.id, locationId: s.location.id, qtyDelta: 3, reason: 'walk' } }) },
  'POST /v1/inventory/moves': {
    postings: 1,
    make: async (s) => ({ url: '/v1/inventory/moves', body: { lines: [{ itemId: s.item.id, fromLocationId: s.location.id, toLocationId: s.locations[1].id, qty: 1 }] } }),
  },
  'POST /v1/inventory/statuses': { event: 'stock_status.created', action: 'create', make: async () => ({ url: '/v1/inventory/statuses', body: { code: `S${short()}`, name: 'Held', isAvailable: false } }) },
  'POST /v1/inventory/reservations': { event: 'reservation.created', action: 'create', make: async (s) => ({ url: '/v1/inventory/reservations', body: { itemId: s.item.id, facilityId: s.facility.id, qty: 1 } }) },
  'PATCH /v1/inventory/reservations/{id}': { event: 'reservation.updated', action: 'patch', make: async (s) => ({ url: `/v1/inventory/reservations/${(await reservationIn(s.t, s, 'open')).id}`, body: { notes: 'walk' } }) },
  'POST /v1/inventory/reservations/{id}/allocate': {
    event: 'reservation.updated', action: 'allocate',
    make: async (s) => ({ url: `/v1/inventory/reservations/${(await reservationIn(s.t, s, 'open')).id}/allocate`, body: { allocations: [{ locationId: s.location.id, qty: 2 }] } }),
  },
  'POST /v1/inventory/reservations/{id}/release': { event: 'reservation.updated', action: 'release', make: async (s) => ({ url: `/v1/inventory/reservations/${(await reservationIn(s.t, s, 'allocated')).id}/release` }) },
  'POST /v1/inventory/reservations/{id}/cancel': { event: 'reservation.updated', action: 'cancel', make: async (s) => ({ url: `/v1/inventory/reservations/${(await reservationIn(s.t, s, 'open')).id}/cancel` }) },
  'POST /v1/inventory/reservations/{id}/fulfill': {
    event: 'reservation.updated', action: 'fulfill', postings: 1, make: async (s) => ({ url: `/v1/inventory/reservations/${(await reservationIn(s.t, s, 'allocated')).id}/fulfill` }),
  },
  'POST /v1/inventory/transfers': {
    event: 'transfer.created', action: 'create',
    make: async (s) => {
      const to = await facilityWithLocations(s.t, 1);
      return { url: '/v1/inventory/transfers', body: { fromFacilityId: s.facility.id, toFacilityId: to.facility.id, lines: [{ itemId: s.item.id, qty: 1, fromLocationId: s.location.id, toLocationId: to.location.id }] } };
    },
  },
  'PATCH /v1/inventory/transfers/{id}': { event: 'transfer.updated', action: 'patch', make: async (s) => ({ url: `/v1/inventory/transfers/${(await transferIn(s.t, s, 'draft')).id}`, body: { notes: 'walk' } }) },
  'POST /v1/inventory/transfers/{id}/ship': { event: 'transfer.updated', action: 'ship', postings: 1, make: async (s) => ({ url: `/v1/inventory/transfers/${(await transferIn(s.t, s, 'draft')).id}/ship` }) },
  'POST /v1/inventory/transfers/{id}/receive': { event: 'transfer.updated', action: 'receive', postings: 1, make: async (s) => ({ url: `/v1/inventory/transfers/${(await transferIn(s.t, s, 'shipped')).id}/receive` }) },
  'POST /v1/inventory/transfers/{id}/cancel': { event: 'transfer.updated', action: 'cancel', make: async (s) => ({ url: `/v1/inventory/transfers/${(await transferIn(s.t, s, 'draft')).id}/cancel` }) },
  'POST /v1/inventory/count-sessions': { event: 'count_session.created', action: 'create', make: async (s) => ({ url: '/v1/inventory/count-sessions', body: { facilityId: s.facility.id } }) },
  'POST /v1/inventory/count-sessions/{id}/lines': {
    event: 'count_session.updated', action: 'lines',
    make: async (s) => ({ url: `/v1/inventory/count-sessions/${(await countSessionIn(s.t, s, 'open', { lines: [] })).id}/lines`, body: { lines: [{ itemId: s.item.id, locationId: s.location.id, countedQty: 1 }] } }),
  },
  'POST /v1/inventory/count-sessions/{id}/complete': {
    event: 'count_session.updated', action: 'complete', postings: 1, make: async (s) => ({ url: `/v1/inventory/count-sessions/${(await countSessionIn(s.t, s, 'open')).id}/complete` }),
  },
  'POST /v1/inventory/count-sessions/{id}/cancel': { event: 'count_session.updated', action: 'cancel', make: async (s) => ({ url: `/v1/inventory/count-sessions/${(await countSessionIn(s.t, s, 'open')).id}/cancel` }) },
  'POST /v1/inventory/policies': {
    event: 'policy.created', action: 'create', make: async (s) => ({ url: '/v1/inventory/policies', body: { itemId: (await newItem(s.t, s.uom('EA'))).id, facilityId: s.facility.id, minQty: 1, maxQty: 5 } }),
  },
  'PATCH /v1/inventory/policies/{id}': {
    event: 'policy.updated', action: 'patch',
    make: async (s) => {
      const p = (await s.t.post('/v1/inventory/policies', { itemId: (await newItem(s.t, s.uom('EA'))).id, facilityId: s.facility.id, minQty: 1, maxQty: 5 }).expect(201)).body.data;
      return { url: `/v1/inventory/policies/${p.id}`, body: { maxQty: 6 } };
    },
  },
  'POST /v1/procurement/suppliers': { event: 'supplier.created', action: 'create', make: async () => ({ url: '/v1/procurement/suppliers', body: { code: `SUP-${short()}`, name: 'Acme' } }) },
  'PATCH /v1/procurement/suppliers/{id}': { event: 'supplier.updated', action: 'patch', make: async (s) => ({ url: `/v1/procurement/suppliers/${(await newSupplier(s.t)).id}`, body: { name: 'Acme 2' } }) },
  'POST /v1/procurement/purchase-orders': {
    event: 'purchase_order.created', action: 'create',
    make: async (s) => ({ url: '/v1/procurement/purchase-orders', body: { supplierId: (await newSupplier(s.t)).id, facilityId: s.facility.id, lines: [{ itemId: s.item.id, qtyOrdered: 1, unitPrice: 1 }] } }),
  },
  ...Object.fromEntries(
    (
      [
        ['PATCH', '', 'draft', 'patch', { notes: 'walk' }],
        ['POST', '/submit', 'draft', 'submit'],
        ['POST', '/approve', 'submitted', 'approve'],
        ['POST', '/send', 'approved', 'send'],
        ['POST', '/cancel', 'draft', 'cancel'],
      ] as const
    ).map(([method, tail, state, action, body]) => [
      `${method} /v1/procurement/purchase-orders/{id}${tail}`,
      { event: 'purchase_order.updated', action, make: async (s: Stock) => ({ url: `/v1/procurement/purchase-orders/${(await purchaseOrderIn(s.t, state, { facilityId: s.facility.id, itemId: s.item.id })).id}${tail}`, body }) },
    ]),
  ),
  'POST /v1/procurement/purchase-orders/{id}/receipts': {
    event: 'receipt.created', action: 'create', postings: 1,
    make: async (s) => {
      const po = await purchaseOrderIn(s.t, 'sent', { facilityId: s.facility.id, itemId: s.item.id });
      return { url: `/v1/procurement/purchase-orders/${po.id}/receipts`, body: { lines: [{ poLineId: po.lines[0].id, qty: 2, locationId: s.location.id }] } };
    },
  },
  'POST /v1/procurement/requisitions': { event: 'requisition.created', action: 'create', make: async (s) => ({ url: '/v1/procurement/requisitions', body: { facilityId: s.facility.id } }) },
  'PATCH /v1/procurement/requisitions/{id}': { event: 'requisition.updated', action: 'patch', make: async (s) => ({ url: `/v1/procurement/requisitions/${await requisitionIn(s, [])}`, body: { notes: 'walk' } }) },
  'POST /v1/procurement/requisitions/{id}/submit': { event: 'requisition.updated', action: 'submit', make: async (s) => ({ url: `/v1/procurement/requisitions/${await requisitionIn(s, [])}/submit` }) },
  'POST /v1/procurement/requisitions/{id}/approve': { event: 'requisition.updated', action: 'approve', make: async (s) => ({ url: `/v1/procurement/requisitions/${await requisitionIn(s, ['submit'])}/approve` }) },
  'POST /v1/procurement/requisitions/{id}/convert': { event: 'requisition.updated', action: 'convert', make: async (s) => ({ url: `/v1/procurement/requisitions/${await requisitionIn(s, ['submit', 'approve'])}/convert` }) },
  'POST /v1/sales/customers': { event: 'customer.created', action: 'create', make: async () => ({ url: '/v1/sales/customers', body: { code: `CUS-${short()}`, name: 'Buyer' } }) },
  'PATCH /v1/sales/customers/{id}': { event: 'customer.updated', action: 'patch', make: async (s) => ({ url: `/v1/sales/customers/${(await newCustomer(s.t)).id}`, body: { name: 'Buyer 2' } }) },
  'POST /v1/sales/orders': {
    event: 'sales_order.created', action: 'create',
    make: async (s) => ({ url: '/v1/sales/orders', body: { customerId: (await newCustomer(s.t)).id, facilityId: s.facility.id, lines: [{ itemId: s.item.id, qty: 1, unitPrice: 5 }] } }),
  },
  'PATCH /v1/sales/orders/{id}': { event: 'sales_order.updated', action: 'patch', make: async (s) => ({ url: `/v1/sales/orders/${(await salesOrderIn(s.t, 'draft', { facilityId: s.facility.id, itemId: s.item.id })).id}`, body: { notes: 'walk' } }) },
  'POST /v1/sales/orders/{id}/open': { event: 'sales_order.updated', action: 'open', make: async (s) => ({ url: `/v1/sales/orders/${(await salesOrderIn(s.t, 'draft', { facilityId: s.facility.id, itemId: s.item.id })).id}/open` }) },
  'POST /v1/sales/orders/{id}/ship': { event: 'sales_order.updated', action: 'ship', postings: 1, make: async (s) => ({ url: `/v1/sales/orders/${(await salesOrderIn(s.t, 'open', { facilityId: s.facility.id, itemId: s.item.id })).id}/ship` }) },
  'POST /v1/sales/orders/{id}/cancel': { event: 'sales_order.updated', action: 'cancel', make: async (s) => ({ url: `/v1/sales/orders/${(await salesOrderIn(s.t, 'open', { facilityId: s.facility.id, itemId: s.item.id })).id}/cancel` }) },
  'POST /v1/production/boms': {
    event: 'bom.created', action: 'create', make: async (s) => ({ url: '/v1/production/boms', body: { itemId: (await newItem(s.t, s.uom('EA'))).id, components: [{ itemId: s.item.id, qtyPer: 1 }] } }),
  },
  'PATCH /v1/production/boms/{id}': {
    event: 'bom.updated', action: 'patch',
    make: async (s) => {
      const bom = (await s.t.post('/v1/production/boms', { itemId: (await newItem(s.t, s.uom('EA'))).id, components: [{ itemId: s.item.id, qtyPer: 1 }] }).expect(201)).body.data;
      return { url: `/v1/production/boms/${bom.id}`, body: { notes: 'walk' } };
    },
  },
  'POST /v1/production/boms/{id}/activate': {
    event: 'bom.updated', action: 'activate',
    make: async (s) => {
      const bom = (await s.t.post('/v1/production/boms', { itemId: (await newItem(s.t, s.uom('EA'))).id, components: [{ itemId: s.item.id, qtyPer: 1 }] }).expect(201)).body.data;
      return { url: `/v1/production/boms/${bom.id}/activate` };
    },
  },
  'POST /v1/production/work-orders': {
    event: 'work_order.created', action: 'create',
    make: async (s) => {
      const output = await newItem(s.t, s.uom('EA'));
      const bom = (await s.t.post('/v1/production/boms', { itemId: output.id, components: [{ itemId: s.item.id, qtyPer: 1 }] }).expect(201)).body.data;
      await s.t.post(`/v1/production/boms/${bom.id}/activate`, {}).expect(200);
      return { url: WO, body: { itemId: output.id, qtyPlanned: 1, facilityId: s.facility.id } };
    },
  },
  'POST /v1/production/work-orders/{id}/release': { event: 'work_order.updated', action: 'release', make: async (s) => ({ url: `${WO}/${(await workOrder(s, false)).id}/release` }) },
  'POST /v1/production/work-orders/{id}/complete': {
    event: 'work_order.updated', action: 'complete', postings: 1, make: async (s) => ({ url: `${WO}/${(await workOrder(s, true)).id}/complete`, body: { outputLocationId: s.location.id } }),
  },
  // Exempt: webhooks are not resources of the feed (CONTRACT §9 lists them), and a created webhook's answer
  // carries its secret, which must never become event data (src/events/resource-events.ts NOT_RESOURCES).
  'POST /v1/webhooks': { make: async () => ({ url: '/v1/webhooks', body: { url: 'http://127.0.0.1:9/walk', types: ['fixture.none'] } }) },
  'PATCH /v1/webhooks/{id}': {
    make: async (s) => ({ url: `/v1/webhooks/${(await s.t.post('/v1/webhooks', { url: 'http://127.0.0.1:9/walk', types: ['fixture.none'] }).expect(201)).body.data.id}`, body: { description: 'walk' } }),
  },
  'POST /v1/production/work-orders/{id}/cancel': { event: 'work_order.updated', action: 'cancel', make: async (s) => ({ url: `${WO}/${(await workOrder(s, false)).id}/cancel` }) },
};

/** The superuser's connection (set in beforeAll): to see when the feed has caught up. */
let db: Db;

/** Every event of `t` written so far, after `cursor` (once the feed has caught up with the tenant). */
const eventsAfter = (t: Tenant, cursor: string) => drainFeed(db, t, cursor);

describe('every write route writes its events in its own transaction', () => {
  let ctx: TestContext;
  let routes: Array<[string, string]>;
  beforeAll(async () => {
    ctx = await startApp();
    db = ctx.db;
    const doc = (await ctx.http.get('/openapi.json').expect(200)).body as { paths: Record<string, Record<string, unknown>> };
    routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).filter((m) => m === 'post' || m === 'patch').map((m): [string, string] => [m.toUpperCase(), path]),
    );
  });
  afterAll(() => ctx.close());

  it('each POST and PATCH of the OpenAPI description has a case here', () => {
    expect(routes.length).toBeGreaterThan(40);
    expect(routes.map(([m, p]) => `${m} ${p}`).filter((r) => !CASES[r])).toEqual([]);
  });

  it('each one, done validly, writes <resource>.<created|updated> with its action and the answered record as data, and its postings', async () => {
    const s = await tenantWithStock(ctx, { qty: 1000, locations: 2 });
    const t = s.t;
    let cursor = (await eventsAfter(t, (await t.get('/v1/events?limit=1').expect(200)).body.nextCursor)).cursor;
    const problems: string[] = [];
    let resourceEvents = 0;
    let postings = 0;
    for (const [method, path] of routes) {
      const route = `${method} ${path}`;
      const c = CASES[route];
      const req = await c.make(s);
      cursor = (await eventsAfter(t, cursor)).cursor; // the set-up's own events
      const res = await (method === 'POST' ? t.post(req.url, req.body ?? {}) : t.patch(req.url, req.body ?? {}));
      if (res.status >= 300) {
        problems.push(`${route}: ${res.status} ${JSON.stringify(res.body)}`);
        continue;
      }
      const after = await eventsAfter(t, cursor);
      cursor = after.cursor;
      const resource = after.events.filter((e) => !['transaction.posted', 'stock.changed'].includes(e.type));
      const posted = after.events.filter((e) => e.type === 'transaction.posted');
      const record = res.body.data;
      resourceEvents += resource.length;
      postings += posted.length;
      if (c.event) {
        const expected = [{ type: c.event, action: c.action, subject: { type: c.event.split('.')[0], id: record.id }, data: record }];
        const got = resource.map((e) => ({ type: e.type, action: e.action, subject: e.subject, data: e.data }));
        if (JSON.stringify(sorted(got)) !== JSON.stringify(sorted(expected))) problems.push(`${route}: resource events ${JSON.stringify(got).slice(0, 400)}`);
      } else if (resource.length) problems.push(`${route}: unexpected ${resource.map((e) => e.type)}`);
      if (posted.length !== (c.postings ?? 0)) problems.push(`${route}: ${posted.length} transaction.posted, expected ${c.postings ?? 0}`);
      for (const p of posted) {
        const tx = (await t.get(`/v1/inventory/transactions/${p.subject.id}`).expect(200)).body.data;
        if (JSON.stringify(sorted(p.data)) !== JSON.stringify(sorted(tx))) problems.push(`${route}: transaction.posted data differs from its GET`);
        const keys = new Set(tx.lines.map((l: Record<string, unknown>) => [l.itemId, l.locationId, l.lotId, l.statusId].join()));
        const changed = after.events.filter((e) => e.type === 'stock.changed' && e.data.transactionId === tx.id);
        if (changed.length !== keys.size) problems.push(`${route}: ${changed.length} stock.changed for ${keys.size} balance keys`);
      }
      if (!c.postings && after.events.some((e) => e.type === 'stock.changed')) problems.push(`${route}: stock.changed without a posting`);
    }
    expect(problems).toEqual([]);
    expect(resourceEvents).toBe(routes.filter(([m, p]) => CASES[`${m} ${p}`].event).length);
    expect(postings).toBe(routes.reduce((n, [m, p]) => n + (CASES[`${m} ${p}`].postings ?? 0), 0));
  });

  it('a refused request writes nothing: validation, version, state and stock errors', async () => {
    const s = await tenantWithStock(ctx, { qty: 5 });
    const t = s.t;
    const start = (await eventsAfter(t, (await t.get('/v1/events?limit=1').expect(200)).body.nextCursor)).cursor;
    await t.post('/v1/items', { name: 'no number' }).expect(400);
    await t.patch(`/v1/items/${s.item.id}`, { name: 'x' }).set('If-Match', '"99"').expect(412);
    await adjust(t, { itemId: s.item.id, locationId: s.location.id, qtyDelta: -50 }, 409);
    const order = await purchaseOrderIn(t, 'draft', { facilityId: s.facility.id, itemId: s.item.id });
    expect((await eventsAfter(t, start)).events.map((e) => e.type)).toEqual(['supplier.created', 'purchase_order.created']);
    const mid = (await eventsAfter(t, start)).cursor;
    await t.post(`/v1/procurement/purchase-orders/${order.id}/send`).expect(409);
    await t.post('/v1/inventory/reservations', { itemId: s.item.id, facilityId: s.facility.id, qty: 500 }).expect(409);
    expect((await eventsAfter(t, mid)).events).toEqual([]);
  });
});

/** The replay is told apart in the request context (Fastify keeps a reply's headers off the Node response until it sends them). */
describe.each(PLATFORMS)('Idempotency-Key replays on %s', (platform) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp({ HTTP_PLATFORM: platform });
    db = ctx.db;
  });
  afterAll(() => ctx.close());

  it('an Idempotency-Key replay writes no second event; the first run writes its event with the stored answer', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const cursor = (await eventsAfter(t, (await t.get('/v1/events?limit=1').expect(200)).body.nextCursor)).cursor;
    const body = { itemNo: `IT-${short()}`, name: 'Keyed', baseUomId: f.uom('EA') };
    const first = await t.post('/v1/items', body).set('Idempotency-Key', 'walk-1').expect(201);
    const again = await t.post('/v1/items', body).set('Idempotency-Key', 'walk-1').expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const { events } = await eventsAfter(t, cursor);
    expect(events.map((e) => [e.type, e.subject.id])).toEqual([['item.created', first.body.data.id]]);
    expect(events[0].data).toEqual(first.body.data);
  });
});

/** A value with its object keys in order (jsonb keeps them in its own order). */
function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, x]) => [k, sorted(x)]));
  return v;
}
