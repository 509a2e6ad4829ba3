import { randomUUID } from 'node:crypto';
import { newTenant, type Tenant, type TestContext } from './app';

/*
 * The shared test kit: master data, stock, and a document of each kind in each state, all made through the
 * HTTP API as a client would. A spec of a new module (procurement, sales, production) writes only what is new.
 */

// ── master data ───────────────────────────────────────────────────────────────────────────────────

export type InventoryFixture = Awaited<ReturnType<typeof inventoryFixture>>;
export type FacilityFixture = Awaited<ReturnType<typeof facilityWithLocations>>;
interface Ref {
  id: string;
}

/**
 * The test's clock for reservation expiry: moves the reservations' expires_at one second into the past (the
 * database's own now() decides what has lapsed), so no window has to pass on a loaded machine. Returns how
 * many it moved. `db`: a superuser connection (a TestContext's `db`).
 */
export async function lapseReservations(db: { query(text: string, params?: unknown[]): Promise<unknown> }, ids: string[]): Promise<number> {
  const rows = (await db.query(
    `WITH u AS (UPDATE reservations SET expires_at = now() - interval '1 second' WHERE id = ANY($1::uuid[]) RETURNING 1) SELECT count(*)::int AS n FROM u`,
    [ids],
  )) as Array<{ n: number }>;
  return rows[0].n;
}

/** A stock item, a facility with locations, and the tenant's UOMs/statuses: the ground most inventory specs stand on. */
export async function inventoryFixture(t: Tenant, opts: { items?: Array<Record<string, unknown>>; locations?: number } = {}) {
  const uoms = (await t.get('/v1/uoms?limit=500').expect(200)).body.data as Array<{ id: string; code: string }>;
  const uom = (code: string) => uoms.find((u) => u.code === code)!.id;
  const statuses = (await t.get('/v1/inventory/statuses').expect(200)).body.data as Array<{ id: string; code: string }>;
  const status = (code: string) => statuses.find((s) => s.code === code)!.id;
  const facility = (await t.post('/v1/facilities', { code: `WH-${short()}`, name: 'Main warehouse' }).expect(201)).body.data;
  const locations: Array<{ id: string; code: string }> = [];
  for (let i = 0; i < (opts.locations ?? 2); i++) {
    locations.push((await t.post(`/v1/facilities/${facility.id}/locations`, { code: `B-${i + 1}`, name: `Bin ${i + 1}` }).expect(201)).body.data);
  }
  const items: Array<{ id: string; itemNo: string }> = [];
  for (const spec of opts.items ?? [{}]) items.push(await newItem(t, uom('EA'), spec));
  return { uom, status, facility, locations, items, item: items[0], location: locations[0] };
}

export const short = () => randomUUID().slice(0, 8);

/** A new item with a random item number (also its name) in the given base unit. */
export async function newItem(t: Tenant, baseUomId: string, spec: Record<string, unknown> = {}): Promise<{ id: string; itemNo: string }> {
  const itemNo = `IT-${short()}`;
  return (await t.post('/v1/items', { itemNo, name: itemNo, baseUomId, ...spec }).expect(201)).body.data;
}

/** Another facility with `n` locations (codes D-1, D-2, …). */
export async function facilityWithLocations(t: Tenant, n = 2) {
  const facility = (await t.post('/v1/facilities', { code: `WH-${short()}`, name: 'Second warehouse' }).expect(201)).body.data;
  const locations: Array<{ id: string; code: string }> = [];
  for (let i = 0; i < n; i++) {
    locations.push((await t.post(`/v1/facilities/${facility.id}/locations`, { code: `D-${i + 1}`, name: `Dock ${i + 1}` }).expect(201)).body.data);
  }
  return { facility, locations, location: locations[0] };
}

// ── stock ─────────────────────────────────────────────────────────────────────────────────────────

/** Posts an adjustment and expects `status`. */
export const adjust = (t: Tenant, body: Record<string, unknown>, status = 201) =>
  t.post('/v1/inventory/adjustments', { reason: 'test', ...body }).expect(status);

/**
 * A tenant fixture with stock already in: `qty` of every item at the first location (one adjustment each).
 * Given a test context it works in a fresh tenant; given a tenant, in that one. Returns the inventoryFixture
 * plus the tenant `t` and `stocked`, the adjustments made ([{itemId, locationId, qty}], in item order).
 * Items with lot or serial tracking need more than a quantity: stock those with `adjust` yourself.
 */
export async function tenantWithStock(
  ctxOrTenant: TestContext | Tenant,
  opts: { qty: number; items?: Array<Record<string, unknown>>; locations?: number },
) {
  const t = 'token' in ctxOrTenant ? ctxOrTenant : await newTenant(ctxOrTenant);
  const f = await inventoryFixture(t, { items: opts.items, locations: opts.locations });
  if (!f.location) throw new Error('tenantWithStock needs at least one location');
  const stocked: Array<{ itemId: string; locationId: string; qty: number }> = [];
  for (const item of f.items) {
    await adjust(t, { itemId: item.id, locationId: f.location.id, qtyDelta: opts.qty });
    stocked.push({ itemId: item.id, locationId: f.location.id, qty: opts.qty });
  }
  return { ...f, t, qty: opts.qty, stocked };
}

export interface BalanceKey {
  itemId: string;
  locationId: string;
  lotId?: string | null;
  statusCode?: string;
}

/** On hand of one balance (default AVAILABLE, no lot); 0 when there is no row. */
export async function onHand(t: Tenant, key: BalanceKey): Promise<number> {
  const rows = (await t.get(`/v1/inventory/balances?itemId=${key.itemId}&locationId=${key.locationId}&limit=500`).expect(200)).body.data as Array<{
    lotId: string | null;
    statusCode: string;
    qtyOnHand: number;
  }>;
  const row = rows.find((r) => r.lotId === (key.lotId ?? null) && r.statusCode === (key.statusCode ?? 'AVAILABLE'));
  return row?.qtyOnHand ?? 0;
}

/** The id of an item's lot by number. */
export async function lotId(t: Tenant, itemId: string, lotNo: string): Promise<string> {
  const lots = (await t.get(`/v1/inventory/lots?itemId=${itemId}&limit=500`).expect(200)).body.data as Array<{ id: string; lotNo: string }>;
  const lot = lots.find((l) => l.lotNo === lotNo);
  if (!lot) throw new Error(`no lot ${lotNo}`);
  return lot.id;
}

/** The ledger transactions of a source document, newest first. */
export async function transactionsOf(t: Tenant, sourceId: string) {
  return (await t.get(`/v1/inventory/transactions?sourceId=${sourceId}`).expect(200)).body as {
    count: number;
    data: Array<{ type: string; sourceType: string; sourceId: string; lines: Array<{ lineNo: number; itemId: string; locationId: string; lotId: string | null; qtyDelta: number }> }>;
  };
}

// ── a document in each state ─────────────────────────────────────────────────────────────────────
// Each helper makes what the document needs (stock adjusted in for it, another facility for a transfer)
// and drives it to the state through the API, expecting every step to succeed; it returns the document
// body (`data`) as the last step answered it. Defaults: `f.item` at `f.location`, quantity 2. The items
// must be neither lot- nor serial-tracked.

/** What the document helpers need of a fixture. */
export interface Ground {
  item: Ref;
  location: Ref;
  facility: Ref;
}

export type TransferState = 'draft' | 'shipped' | 'received' | 'cancelled';
export type CountSessionState = 'open' | 'completed' | 'cancelled';
export type ReservationState = 'open' | 'allocated' | 'released' | 'cancelled' | 'fulfilled';

const step = async (t: Tenant, url: string, body?: object) => (await t.post(url, body).expect(200)).body.data;

/**
 * A transfer order of `qty` of the item from `f.location` to `to` (default: a new facility with one
 * location), in `state`. The qty is adjusted in at the source first (unless `stock: false`), so a draft can
 * still be shipped.
 */
export async function transferIn(
  t: Tenant,
  f: Ground,
  state: TransferState,
  opts: { item?: Ref; qty?: number; fromLocation?: Ref; to?: { facility: Ref; location: Ref }; stock?: boolean } = {},
) {
  const item = opts.item ?? f.item;
  const qty = opts.qty ?? 2;
  const from = opts.fromLocation ?? f.location;
  const to = opts.to ?? (await facilityWithLocations(t, 1));
  if (opts.stock ?? true) await adjust(t, { itemId: item.id, locationId: from.id, qtyDelta: qty });
  let doc = (
    await t
      .post('/v1/inventory/transfers', {
        fromFacilityId: f.facility.id,
        toFacilityId: to.facility.id,
        lines: [{ itemId: item.id, qty, fromLocationId: from.id, toLocationId: to.location.id }],
      })
      .expect(201)
  ).body.data;
  const url = `/v1/inventory/transfers/${doc.id}`;
  if (state === 'cancelled') doc = await step(t, `${url}/cancel`);
  if (state === 'shipped' || state === 'received') doc = await step(t, `${url}/ship`);
  if (state === 'received') doc = await step(t, `${url}/receive`);
  expect(doc.status).toBe(state);
  return doc;
}

/**
 * A count session at `f.facility` in `state`, with one counted line (the item at `f.location`) unless
 * `lines: []`. The count defaults to what is on hand plus one, so completing it posts one line and never
 * breaks a hold. Completed and cancelled sessions need a line (a session without counts cannot complete).
 */
export async function countSessionIn(
  t: Tenant,
  f: Ground,
  state: CountSessionState,
  opts: { item?: Ref; location?: Ref; countedQty?: number; lines?: object[] } = {},
) {
  const item = opts.item ?? f.item;
  const location = opts.location ?? f.location;
  let doc = (await t.post('/v1/inventory/count-sessions', { facilityId: f.facility.id }).expect(201)).body.data;
  const url = `/v1/inventory/count-sessions/${doc.id}`;
  const lines = opts.lines ?? [
    { itemId: item.id, locationId: location.id, countedQty: opts.countedQty ?? (await onHand(t, { itemId: item.id, locationId: location.id })) + 1 },
  ];
  if (lines.length) doc = await step(t, `${url}/lines`, { lines });
  if (state === 'completed') doc = await step(t, `${url}/complete`);
  if (state === 'cancelled') doc = await step(t, `${url}/cancel`);
  expect(doc.status).toBe(state);
  return doc;
}

/**
 * A reservation of `qty` of the item at `f.facility` in `state`. The qty is adjusted in at `f.location`
 * first (unless `stock: false`); `allocated` and `fulfilled` pin it to that location. `released` and
 * `cancelled` come from an open reservation.
 */
export async function reservationIn(
  t: Tenant,
  f: Ground,
  state: ReservationState,
  opts: { item?: Ref; qty?: number; location?: Ref; stock?: boolean; body?: Record<string, unknown> } = {},
) {
  const item = opts.item ?? f.item;
  const qty = opts.qty ?? 2;
  const location = opts.location ?? f.location;
  if (opts.stock ?? true) await adjust(t, { itemId: item.id, locationId: location.id, qtyDelta: qty });
  let doc = (await t.post('/v1/inventory/reservations', { itemId: item.id, facilityId: f.facility.id, qty, ...opts.body }).expect(201)).body.data;
  const url = `/v1/inventory/reservations/${doc.id}`;
  if (state === 'allocated' || state === 'fulfilled') doc = await step(t, `${url}/allocate`, { allocations: [{ locationId: location.id, qty }] });
  if (state === 'fulfilled') doc = await step(t, `${url}/fulfill`);
  if (state === 'released') doc = await step(t, `${url}/release`);
  if (state === 'cancelled') doc = await step(t, `${url}/cancel`);
  expect(doc.status).toBe(state);
  return doc;
}

// ── procurement ─────────────────────────────────────────────────────────────────────────────────

/** A new active supplier (random code) with `extra` fields. */
export async function newSupplier(t: Tenant, extra: Record<string, unknown> = {}): Promise<{ id: string; code: string; name: string; currency: string }> {
  const code = `SUP-${short()}`;
  return (await t.post('/v1/procurement/suppliers', { code, name: `Supplier ${code}`, ...extra }).expect(201)).body.data;
}

export type PurchaseOrderState = 'draft' | 'submitted' | 'approved' | 'sent';

/**
 * A purchase order at `facilityId` from a new supplier (or `supplierId`), with `lines` (default 10 of
 * `itemId` at 2.5), driven to `state` through the API. Returns the order as the last step answered.
 */
export async function purchaseOrderIn(
  t: Tenant,
  state: PurchaseOrderState,
  opts: { facilityId: string; itemId?: string; lines?: Array<Record<string, unknown>>; supplierId?: string },
) {
  const supplierId = opts.supplierId ?? (await newSupplier(t)).id;
  const lines = opts.lines ?? [{ itemId: opts.itemId, qtyOrdered: 10, unitPrice: 2.5 }];
  let order = (await t.post('/v1/procurement/purchase-orders', { supplierId, facilityId: opts.facilityId, lines }).expect(201)).body.data;
  for (const step of ['submit', 'approve', 'send'].slice(0, ['draft', 'submitted', 'approved', 'sent'].indexOf(state))) {
    order = (await t.post(`/v1/procurement/purchase-orders/${order.id}/${step}`).expect(200)).body.data;
  }
  return order as { id: string; poNo: string; status: string; lines: Array<{ id: string; lineNo: number; itemId: string; qtyOrdered: number; qtyReceived: number }> };
}

// ── sales ─────────────────────────────────────────────────────────────────────────────────────────

/** A new active customer (random code) with `extra` fields. */
export async function newCustomer(t: Tenant, extra: Record<string, unknown> = {}): Promise<{ id: string; code: string; name: string }> {
  const code = `CUS-${short()}`;
  return (await t.post('/v1/sales/customers', { code, name: `Customer ${code}`, ...extra }).expect(201)).body.data;
}

export type SalesOrderState = 'draft' | 'open' | 'partially_shipped' | 'shipped' | 'cancelled';

export interface SalesOrderDoc {
  id: string;
  orderNo: string;
  status: string;
  version: number;
  totalAmount: number;
  lines: Array<{ id: string; lineNo: number; itemId: string; qty: number; uomId: string; unitPrice: number; qtyShipped: number; reservationId: string | null }>;
}

/**
 * A sales order at `facilityId` for a new customer (or `customerId`), with `lines` (default 2 of `itemId`
 * at 5), driven to `state` through the API. With `stockAt` (a location of the facility) each line's qty is
 * adjusted in there first (base units: give base-UOM lines), so the order can open. `partially_shipped`
 * ships 1 of the first line (its qty must be more than 1); `shipped` ships everything; `cancelled` cancels
 * the draft. Returns the order as the last step answered.
 */
export async function salesOrderIn(
  t: Tenant,
  state: SalesOrderState,
  opts: { facilityId: string; itemId?: string; lines?: Array<Record<string, unknown>>; customerId?: string; stockAt?: string },
): Promise<SalesOrderDoc> {
  const customerId = opts.customerId ?? (await newCustomer(t)).id;
  const lines = opts.lines ?? [{ itemId: opts.itemId, qty: 2, unitPrice: 5 }];
  if (opts.stockAt) for (const l of lines) await adjust(t, { itemId: l.itemId, locationId: opts.stockAt, qtyDelta: l.qty });
  let order: SalesOrderDoc = (await t.post('/v1/sales/orders', { customerId, facilityId: opts.facilityId, lines }).expect(201)).body.data;
  const url = `/v1/sales/orders/${order.id}`;
  if (state === 'cancelled') order = await step(t, `${url}/cancel`);
  if (state === 'open' || state === 'partially_shipped' || state === 'shipped') order = await step(t, `${url}/open`);
  if (state === 'partially_shipped') order = await step(t, `${url}/ship`, { lines: [{ lineId: order.lines[0].id, qty: 1 }] });
  if (state === 'shipped') order = await step(t, `${url}/ship`);
  expect(order.status).toBe(state);
  return order;
}

// ── one record of every kind ──────────────────────────────────────────────────────────────────────

/**
 * A tenant with stock and one record of every collection that has an id route, keyed by the collection's
 * path segment (`items`, `purchase-orders`, …): what route sweeps put in place of `{id}`.
 */
export async function recordsOfEveryKind(ctx: TestContext) {
  const f = await tenantWithStock(ctx, { qty: 50 });
  const t = f.t;
  const ids: Record<string, string> = {
    items: f.item.id,
    facilities: f.facility.id,
    locations: f.location.id,
    reservations: (await reservationIn(t, f, 'open')).id,
    transfers: (await transferIn(t, f, 'draft')).id,
    'count-sessions': (await countSessionIn(t, f, 'open')).id,
    policies: (await t.post('/v1/inventory/policies', { itemId: f.item.id, facilityId: f.facility.id, minQty: 1, maxQty: 5 }).expect(201)).body.data.id,
    transactions: (await t.get('/v1/inventory/transactions?limit=1').expect(200)).body.data[0].id,
    suppliers: (await newSupplier(t)).id,
    'purchase-orders': (await purchaseOrderIn(t, 'approved', { facilityId: f.facility.id, itemId: f.item.id })).id,
    requisitions: (await t.post('/v1/procurement/requisitions', { facilityId: f.facility.id }).expect(201)).body.data.id,
    customers: (await newCustomer(t)).id,
    orders: (await salesOrderIn(t, 'open', { facilityId: f.facility.id, itemId: f.item.id })).id,
    boms: (await t.post('/v1/production/boms', { itemId: (await inventoryFixture(t)).item.id, components: [{ itemId: f.item.id, qtyPer: 1 }] }).expect(201)).body.data.id,
  };
  const bom = (await t.post(`/v1/production/boms/${ids.boms}/activate`, {}).expect(200)).body.data;
  ids['work-orders'] = (await t.post('/v1/production/work-orders', { itemId: bom.itemId, qtyPlanned: 1, facilityId: f.facility.id }).expect(201)).body.data.id;
  // A webhook on loopback (allowed in test apps) for a type no event has: nothing is ever delivered to it.
  ids.webhooks = (await t.post('/v1/webhooks', { url: 'http://127.0.0.1:9/fixture', types: ['fixture.none'] }).expect(201)).body.data.id;
  return { ...f, ids };
}

/** A route path of the OpenAPI description with each `{param}` replaced by the id of the collection before it. */
export function routeWithIds(path: string, ids: Record<string, string>): string {
  return path.replace(/\/([^/]+)\/\{[^}]+\}/g, (_, collection: string) => {
    const id = ids[collection];
    if (!id) throw new Error(`no record for ${collection} in ${path}`);
    return `/${collection}/${id}`;
  });
}
