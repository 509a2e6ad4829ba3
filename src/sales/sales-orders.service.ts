import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { AppError, ErrorDetail, insufficientStock, invalidField, invalidState, notFound, unknownReference } from '../common/errors';
import { likePattern, page } from '../common/pagination';
import { SqlFilters } from '../common/sql-filters';
import { UnitOfWork } from '../database/unit-of-work';
import { auditView, DocumentRow, DocumentStore, Transitions } from '../documents/document-store';
import { DocumentNumbers } from '../documents/numbering';
import { num, qty as toQty, sql, sum } from '../documents/quantity';
import { CatalogRefs, ItemRef } from '../documents/references';
import { checkLotOfItem } from '../documents/tracking';
import { UomConversion } from '../documents/uom-conversion';
import { LedgerService } from '../inventory/ledger/ledger.service';
import { IssueLine } from '../inventory/ledger/posting';
import { ReservationView } from '../inventory/ledger/views';
import { CustomersService } from './customers.service';
import { CreateSalesOrderDto, SalesOrderLineDto, SalesOrderQuery, ShipLineDto, ShipSalesOrderDto, SoStatus, UpdateSalesOrderDto } from './sales.dto';

interface SoRow extends DocumentRow {
  order_no: string;
  customer_id: string;
  facility_id: string;
  requested_date: string | null;
  notes: string | null;
  total_amount: string;
}

interface SoLineRow {
  id: string;
  sales_order_id: string;
  line_no: number;
  item_id: string;
  uom_id: string;
  qty: string;
  unit_price: string;
  qty_shipped: string;
  qty_base: string;
  qty_shipped_base: string;
  reservation_id: string | null;
}

/** A checked order line: quantity in its UOM, and in base units (rounded up). */
interface NewSoLine {
  itemId: string;
  uomId: string;
  qty: Decimal;
  qtyBase: Decimal;
  unitPrice: Decimal;
}

/** What one ship call takes from one order line: in the line's UOM and in base units. */
interface Shipping {
  line: SoLineRow;
  item: ItemRef;
  qty: Decimal;
  base: Decimal;
  field: string;
  locationId?: string;
  lotId?: string;
  serialNos?: string[];
}

/** What a line's reservation still has to give, as this ship call plans it. */
interface HoldLeft {
  view: ReservationView;
  /** Allocated stock not yet taken by an earlier line of this call; `anywhere` for what automatic allocation will pin. */
  allocations: Array<{ locationId: string | null; lotId: string | null; qty: Decimal; anywhere?: boolean }>;
  unallocated: Decimal;
}

const SO_COLUMNS = `id, order_no, customer_id, facility_id, status, to_char(requested_date, 'YYYY-MM-DD') AS requested_date, notes, total_amount,
  version, created_by, updated_by, created_at, updated_at`;

const soView = (o: SoRow, lines: SoLineRow[]) => ({
  id: o.id,
  orderNo: o.order_no,
  customerId: o.customer_id,
  facilityId: o.facility_id,
  status: o.status as SoStatus,
  requestedDate: o.requested_date,
  notes: o.notes,
  lines: lines.map((l) => ({
    id: l.id,
    lineNo: l.line_no,
    itemId: l.item_id,
    qty: num(l.qty),
    uomId: l.uom_id,
    unitPrice: num(l.unit_price),
    qtyShipped: num(l.qty_shipped),
    reservationId: l.reservation_id,
  })),
  totalAmount: num(o.total_amount),
  ...auditView(o),
});
export type SalesOrderView = ReturnType<typeof soView>;

/**
 * draft →open→ open →ship→ partially_shipped | shipped (ship again from partially_shipped); cancel from
 * draft|open|partially_shipped. PATCH is the `change` action. `ship` sets its state from what is left.
 */
export const SALES_ORDER = new Transitions<SoStatus, 'change' | 'open' | 'ship' | 'cancel'>('Sales order', {
  change: { from: ['draft'] },
  open: { from: ['draft'], to: 'open' },
  ship: { from: ['open', 'partially_shipped'] },
  cancel: { from: ['draft', 'open', 'partially_shipped'], to: 'cancelled' },
});

/** Reservation states that still hold stock. */
const HOLDING = ['open', 'allocated'];

/** Sales orders: reserve on open, ship through one ledger posting per call, release on cancel. */
@Injectable()
export class SalesOrdersService {
  private readonly store: DocumentStore<SoRow, SoStatus, keyof typeof SALES_ORDER.table>;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly uoms: UomConversion,
    private readonly numbers: DocumentNumbers,
    private readonly ledger: LedgerService,
    private readonly customers: CustomersService,
  ) {
    this.store = new DocumentStore(uow, 'sales_orders', SALES_ORDER, (r) => r.order_no);
  }

  private get m() {
    return this.uow.manager;
  }

  /** Newest first (createdAt, then id); q: order number or customer name (sales_order_search, index-backed under RLS). */
  async list(query: SalesOrderQuery) {
    const f = new SqlFilters(this.uow.tenantId)
      .add('status = ?', query.status)
      .add('customer_id = ?', query.customerId)
      .add('facility_id = ?', query.facilityId)
      .add('id IN (SELECT id FROM sales_order_search(?))', query.q && likePattern(query.q));
    const { rows, count } = await f.pageOf<SoRow>(this.m, `SELECT ${SO_COLUMNS} FROM sales_orders WHERE ${f.where}`, 'created_at DESC, id DESC', query);
    const lines = await this.linesOf(rows.map((r) => r.id));
    return page(rows.map((r) => soView(r, lines.filter((l) => l.sales_order_id === r.id))), count, query);
  }

  async get(id: string): Promise<SalesOrderView> {
    const [row]: SoRow[] = await this.m.query(`SELECT ${SO_COLUMNS} FROM sales_orders WHERE tenant_id = $1 AND id = $2`, [this.uow.tenantId, id]);
    if (!row) throw notFound('Sales order');
    return soView(row, await this.linesOf([id]));
  }

  async create(dto: CreateSalesOrderDto): Promise<SalesOrderView> {
    await this.customers.reference(dto.customerId, 'customerId');
    await this.refs.facility(dto.facilityId, 'facilityId', 'new');
    const lines = await this.checkLines(dto.lines ?? []);
    const id = randomUUID();
    const orderNo = await this.numbers.next('SO');
    await this.m.query(
      `INSERT INTO sales_orders (tenant_id, id, order_no, customer_id, facility_id, status, requested_date, notes, total_amount, created_by, updated_by)
       VALUES ($1, $2, $3, $4, $5, 'draft', $6, $7, $8, $9, $9)`,
      [this.uow.tenantId, id, orderNo, dto.customerId, dto.facilityId, dto.requestedDate ?? null, dto.notes ?? null, sql(total(lines)), this.uow.userId],
    );
    await this.writeLines(id, lines);
    return this.get(id);
  }

  /** Draft only. A given `lines` replaces all lines; the total follows the lines. */
  async update(id: string, dto: UpdateSalesOrderDto, ifMatch?: number): Promise<SalesOrderView> {
    const o = await this.store.lockFor('change', id, ifMatch);
    if (Object.values(dto).every((v) => v === undefined)) return this.get(id);
    if (dto.customerId !== undefined) await this.customers.reference(dto.customerId, 'customerId');
    if (dto.facilityId !== undefined) await this.refs.facility(dto.facilityId, 'facilityId', 'new');
    let totalAmount = toQty(o.total_amount);
    if (dto.lines) {
      const lines = await this.checkLines(dto.lines);
      await this.m.query(`DELETE FROM sales_order_lines WHERE tenant_id = $1 AND sales_order_id = $2`, [this.uow.tenantId, id]);
      await this.writeLines(id, lines);
      totalAmount = total(lines);
    }
    const pick = <T>(given: T | undefined, stored: T) => (given === undefined ? stored : given);
    await this.store.touch(
      id,
      // The stored date is left to SQL (a date column read back with SELECT * is a JS Date).
      'customer_id = $4, facility_id = $5, requested_date = CASE WHEN $6::boolean THEN $7::date ELSE requested_date END, notes = $8, total_amount = $9',
      [
        pick(dto.customerId, o.customer_id), pick(dto.facilityId, o.facility_id), dto.requestedDate !== undefined, dto.requestedDate ?? null,
        pick(dto.notes, o.notes), sql(totalAmount),
      ],
    );
    return this.get(id);
  }

  /**
   * draft → open: one reservation per stock line at the order's facility, in base units, all or nothing
   * (LedgerService.reserveAll: every line is checked against available-to-promise first, lines of one
   * item together, and a shortage is one 409 insufficient_stock naming every short line).
   */
  async open(id: string, ifMatch?: number): Promise<SalesOrderView> {
    const o = await this.store.lockFor('open', id, ifMatch);
    const lines = await this.linesOf([id]);
    if (!lines.length) throw invalidState(`Sales order ${o.order_no} has no lines; add one before opening it`);
    // Opening commits the order: the customer, the facility and every item must still be active.
    await this.customers.reference(o.customer_id, 'customerId');
    await this.refs.facility(o.facility_id, 'facilityId', 'new');
    const items = await this.refs.items(lines.map((l) => l.item_id));
    for (const l of lines) activeItem(items, l.item_id, `lines[${l.line_no - 1}].itemId`);
    // Reserved in the positions' lock order (item id), so orders opened together queue rather than deadlock.
    const stock = lines
      .filter((l) => items.get(l.item_id)!.kind === 'stock')
      .sort((a, b) => (a.item_id < b.item_id ? -1 : a.item_id > b.item_id ? 1 : a.line_no - b.line_no));
    const reservationIds = await this.reserveAll(o, stock);
    if (stock.length)
      await this.m.query(
        `UPDATE sales_order_lines l SET reservation_id = k.reservation_id FROM unnest($3::uuid[], $4::uuid[]) AS k(id, reservation_id)
          WHERE l.tenant_id = $1 AND l.sales_order_id = $2 AND l.id = k.id`,
        [this.uow.tenantId, id, stock.map((l) => l.id), reservationIds],
      );
    await this.store.move(id, 'open');
    return this.get(id);
  }

  /** The stock lines' holds; a shortage names the order, and each short line by field, id and number. */
  private async reserveAll(o: SoRow, stock: SoLineRow[]): Promise<string[]> {
    const field = (l: SoLineRow) => `lines[${l.line_no - 1}]`;
    try {
      return await this.ledger.reserveAll(
        stock.map((l) => ({ itemId: l.item_id, facilityId: o.facility_id, qty: l.qty_base, demandType: 'sales_order', demandId: o.id, demandLineId: l.id, field: field(l) })),
      );
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'insufficient_stock') throw err;
      const lineOf = (d: ErrorDetail) => stock.find((l) => d.field === field(l) || d.field?.startsWith(`${field(l)}.`));
      throw insufficientStock(
        `Sales order ${o.order_no} cannot open: ${err.message}${(err.details?.length ?? 0) > 1 ? ` (${err.details!.length} short lines)` : ''}`,
        // In line order (the holds were reserved in item order).
        err.details?.map((d) => ({ ...d, lineId: lineOf(d)?.id, lineNo: lineOf(d)?.line_no })).sort((a, b) => (a.lineNo ?? 0) - (b.lineNo ?? 0)),
      );
    }
  }

  /**
   * Ships the given quantities (in the lines' UOMs), or everything outstanding. The stock lines' holds
   * are allocated first where they do not cover what ships (at `locationId` when given, else
   * automatically, earliest expiry first), then one `shipment` posting issues from them all.
   */
  async ship(id: string, dto: ShipSalesOrderDto, ifMatch?: number): Promise<SalesOrderView> {
    const o = await this.store.lockFor('ship', id, ifMatch);
    const lines = await this.linesOf([id]);
    const items = await this.refs.items(lines.map((l) => l.item_id));
    const shipping = dto.lines?.length ? await this.requested(o, lines, items, dto.lines) : outstanding(lines, items);
    const holds = await this.allocateFor(shipping);
    const issues = shipping
      .filter((s) => s.line.reservation_id && s.base.gt(0))
      .map((s): IssueLine => ({
        reservationId: s.line.reservation_id!, qty: s.base, locationId: s.locationId ?? null, lotId: s.lotId ?? null, serialNos: s.serialNos ?? null, field: s.field,
      }));
    if (issues.length) await this.ledger.post({ type: 'shipment', sourceType: 'sales_order', sourceId: id, lines: issues });
    await this.m.query(
      `UPDATE sales_order_lines l SET qty_shipped = l.qty_shipped + k.qty, qty_shipped_base = l.qty_shipped_base + k.base
         FROM (SELECT id, sum(qty) AS qty, sum(base) AS base FROM unnest($3::uuid[], $4::numeric[], $5::numeric[]) AS k(id, qty, base) GROUP BY id) k
        WHERE l.tenant_id = $1 AND l.sales_order_id = $2 AND l.id = k.id`,
      [this.uow.tenantId, id, shipping.map((s) => s.line.id), shipping.map((s) => sql(s.qty)), shipping.map((s) => sql(s.base))],
    );
    await this.closeCompleted(shipping, holds);
    const [{ complete }]: Array<{ complete: boolean }> = await this.m.query(
      `SELECT bool_and(qty_shipped >= qty) AS complete FROM sales_order_lines WHERE tenant_id = $1 AND sales_order_id = $2`,
      [this.uow.tenantId, id],
    );
    await this.store.touch(id, 'status = $4', [complete ? 'shipped' : 'partially_shipped']);
    return this.get(id);
  }

  /**
   * The lines of a ship body: each a line of this order (404 naming the field); stock fields only on
   * stock lines (400); together at most what is outstanding per line (409 naming the line). Base
   * quantities never exceed what the line still has to ship in base units, and the call that completes
   * a line ships exactly its rest (so rounding up partial quantities cannot overdraw the hold).
   */
  private async requested(o: SoRow, lines: SoLineRow[], items: Map<string, ItemRef>, body: ShipLineDto[]): Promise<Shipping[]> {
    const byId = new Map(lines.map((l) => [l.id, l]));
    const locations = await this.refs.locations(body.map((s) => s.locationId).filter((x): x is string => !!x));
    const lots = await this.refs.lots(body.map((s) => s.lotId).filter((x): x is string => !!x));
    const taken = new Map<string, { qty: Decimal; base: Decimal }>();
    const over: ErrorDetail[] = [];
    const shipping: Shipping[] = [];
    for (const [i, s] of body.entries()) {
      const f = `lines[${i}]`;
      const line = byId.get(s.lineId);
      if (!line) throw unknownReference(`${f}.lineId`);
      const item = items.get(line.item_id)!;
      if (!line.reservation_id) {
        for (const k of ['locationId', 'lotId', 'serialNos'] as const)
          if (s[k] !== undefined) throw invalidField(`${f}.${k}`, `must not be given: line ${line.line_no} (${item.itemNo}, ${item.kind}) holds no stock`);
      }
      if (s.serialNos && !item.serialTracked) throw invalidField(`${f}.serialNos`, `must be empty: ${item.itemNo} is not serial-tracked`);
      // Shipping finishes committed work: an inactive location or item is not refused.
      if (s.locationId) this.refs.location(locations, s.locationId, `${f}.locationId`, 'committed', o.facility_id);
      if (s.lotId) {
        if (!item.lotTracked) throw invalidField(`${f}.lotId`, `must be empty: ${item.itemNo} is not lot-tracked`);
        checkLotOfItem(lots.find((l) => l.id === s.lotId), item, `${f}.lotId`);
      }
      const converted = await this.uoms.toBase(item, line.uom_id, s.qty, `${f}.qty`);
      const before = taken.get(line.id) ?? { qty: toQty(0), base: toQty(0) };
      const qty = before.qty.plus(s.qty);
      const left = toQty(line.qty).minus(line.qty_shipped);
      if (qty.gt(left)) {
        over.push({ field: `${f}.qty`, message: 'exceeds the outstanding quantity', lineId: line.id, lineNo: line.line_no, requested: qty.toNumber(), outstanding: left.toNumber() });
        continue;
      }
      const baseLeft = toQty(line.qty_base).minus(line.qty_shipped_base).minus(before.base);
      const base = qty.eq(left) ? baseLeft : Decimal.min(converted, baseLeft);
      taken.set(line.id, { qty, base: before.base.plus(base) });
      shipping.push({ line, item, qty: toQty(s.qty), base, field: f, locationId: s.locationId, lotId: s.lotId, serialNos: s.serialNos });
    }
    if (over.length) {
      const d = over[0];
      throw new AppError(409, 'invalid_state', `Sales order ${o.order_no} line ${d.lineNo} has ${d.outstanding} outstanding; cannot ship ${d.requested}`, over);
    }
    return shipping;
  }

  /**
   * Allocates what the holds do not yet cover: at the line's location (and lot) when given, else the
   * hold's whole unallocated rest automatically. Planned over this call's lines in order, so several
   * lines of one hold add up; the posting then checks every issue exactly.
   */
  private async allocateFor(shipping: Shipping[]): Promise<Map<string, ReservationView>> {
    const holds = new Map<string, HoldLeft>();
    for (const s of shipping) {
      const id = s.line.reservation_id;
      if (!id || !s.base.gt(0)) continue;
      let h = holds.get(id);
      if (!h) {
        const view = await this.ledger.reservation(id);
        // A hold that no longer holds is left to the posting, which refuses it naming its state.
        if (!HOLDING.includes(view.status)) continue;
        h = {
          view,
          allocations: view.allocations.map((a) => ({ locationId: a.locationId, lotId: a.lotId, qty: toQty(a.qty) })),
          unallocated: toQty(view.qty).minus(view.qtyAllocated).minus(view.qtyFulfilled),
        };
        holds.set(id, h);
      }
      const matching = h.allocations.filter((a) => a.anywhere || ((!s.locationId || a.locationId === s.locationId) && (!s.lotId || a.lotId === s.lotId)));
      const covered = sum(matching.map((a) => a.qty));
      const missing = Decimal.min(s.base.minus(covered), h.unallocated);
      if (missing.gt(0)) {
        if (s.locationId) {
          if (s.item.lotTracked && !s.lotId) throw invalidField(`${s.field}.lotId`, `is required to ship ${s.item.itemNo} from a location it is not yet allocated at: it is lot-tracked`);
          await this.allocate(s, [{ locationId: s.locationId, lotId: s.lotId ?? null, qty: missing }]);
          h.allocations.push({ locationId: s.locationId, lotId: s.lotId ?? null, qty: missing });
          h.unallocated = h.unallocated.minus(missing);
        } else {
          await this.allocate(s);
          h.allocations.push({ locationId: null, lotId: null, qty: h.unallocated, anywhere: true });
          h.unallocated = toQty(0);
        }
        matching.push(h.allocations[h.allocations.length - 1]);
      }
      // What this line takes is gone for the call's next lines.
      let left = s.base;
      for (const a of matching) {
        const take = Decimal.min(left, a.qty);
        a.qty = a.qty.minus(take);
        left = left.minus(take);
      }
    }
    return new Map([...holds].map(([id, h]) => [id, h.view]));
  }

  /** A ledger allocation for a ship line, its errors pointing at that line. */
  private async allocate(s: Shipping, pins?: Array<{ locationId: string; lotId: string | null; qty: Decimal }>): Promise<void> {
    try {
      await this.ledger.allocate(s.line.reservation_id!, pins);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const field = (d: ErrorDetail) => `${s.field}.${d.field === 'allocations' ? 'qty' : (d.field ?? 'qty').split('.').pop()}`;
      throw new AppError(err.status, err.code, err.message, err.details?.map((d) => ({ ...d, field: field(d) })));
    }
  }

  /**
   * A line this call completes has its hold closed: fulfilled already unless the hold was changed
   * since open (e.g. its quantity raised), in which case what it still holds is freed.
   */
  private async closeCompleted(shipping: Shipping[], holds: Map<string, ReservationView>): Promise<void> {
    const shipped = new Map<string, Decimal>();
    const issued = new Map<string, Decimal>();
    for (const s of shipping) {
      shipped.set(s.line.id, (shipped.get(s.line.id) ?? toQty(0)).plus(s.qty));
      if (s.line.reservation_id) issued.set(s.line.reservation_id, (issued.get(s.line.reservation_id) ?? toQty(0)).plus(s.base));
    }
    const stillHolding = [...new Map(shipping.map((s) => [s.line.id, s.line])).values()]
      .filter((l) => l.reservation_id && holds.has(l.reservation_id) && toQty(l.qty_shipped).plus(shipped.get(l.id)!).gte(l.qty))
      .map((l) => holds.get(l.reservation_id!)!)
      .filter((h) => toQty(h.qtyFulfilled).plus(issued.get(h.id)!).lt(h.qty))
      .sort(byPosition);
    for (const h of stillHolding) await this.ledger.closeReservation(h.id);
  }

  /**
   * → cancelled: every line's hold that still holds stock is cancelled (in the positions' lock order);
   * what shipped stays shipped.
   */
  async cancel(id: string, ifMatch?: number): Promise<SalesOrderView> {
    await this.store.lockFor('cancel', id, ifMatch);
    const lines = await this.linesOf([id]);
    const holds: ReservationView[] = [];
    for (const l of lines) if (l.reservation_id) holds.push(await this.ledger.reservation(l.reservation_id));
    holds.sort(byPosition);
    for (const h of holds) if (HOLDING.includes(h.status)) await this.ledger.release(h.id, 'cancelled');
    await this.store.move(id, 'cancel');
    return this.get(id);
  }

  /**
   * Lines of a new or changed draft (new work): known, active items of any kind (non-stock goods and
   * services are sold too, they just hold and post no stock); quantity in the line's UOM, also in base units.
   */
  private async checkLines(lines: SalesOrderLineDto[]): Promise<NewSoLine[]> {
    const items = await this.refs.items(lines.map((l) => l.itemId));
    const checked: NewSoLine[] = [];
    for (const [i, line] of lines.entries()) {
      const f = `lines[${i}]`;
      const item = activeItem(items, line.itemId, `${f}.itemId`);
      const qtyBase = await this.uoms.toBase(item, line.uomId, line.qty, `${f}.qty`);
      checked.push({ itemId: item.id, uomId: line.uomId ?? item.baseUomId, qty: toQty(line.qty), qtyBase, unitPrice: toQty(line.unitPrice) });
    }
    return checked;
  }

  private async writeLines(orderId: string, lines: NewSoLine[]): Promise<void> {
    if (!lines.length) return;
    await this.m.query(
      `INSERT INTO sales_order_lines (tenant_id, id, sales_order_id, line_no, item_id, uom_id, qty, unit_price, qty_base)
       SELECT $1, gen_random_uuid(), $2, k.ord, k.item_id, k.uom_id, k.qty, k.price, k.base
         FROM unnest($3::uuid[], $4::uuid[], $5::numeric[], $6::numeric[], $7::numeric[]) WITH ORDINALITY AS k(item_id, uom_id, qty, price, base, ord)`,
      [this.uow.tenantId, orderId, lines.map((l) => l.itemId), lines.map((l) => l.uomId), lines.map((l) => sql(l.qty)), lines.map((l) => sql(l.unitPrice)), lines.map((l) => sql(l.qtyBase))],
    );
  }

  private linesOf(ids: string[]): Promise<SoLineRow[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.m.query(
      `SELECT id, sales_order_id, line_no, item_id, uom_id, qty, unit_price, qty_shipped, qty_base, qty_shipped_base, reservation_id
         FROM sales_order_lines WHERE tenant_id = $1 AND sales_order_id = ANY($2::uuid[]) ORDER BY sales_order_id, line_no`,
      [this.uow.tenantId, ids],
    );
  }
}

/** Σ qty × unitPrice, exactly. */
const total = (lines: NewSoLine[]) => sum(lines.map((l) => l.qty.times(l.unitPrice)));

/** Everything still outstanding on every line (a ship call without lines). */
function outstanding(lines: SoLineRow[], items: Map<string, ItemRef>): Shipping[] {
  return lines
    .filter((l) => toQty(l.qty).gt(l.qty_shipped))
    .map((l) => ({
      line: l, item: items.get(l.item_id)!, qty: toQty(l.qty).minus(l.qty_shipped), base: toQty(l.qty_base).minus(l.qty_shipped_base), field: `lines[${l.line_no - 1}]`,
    }));
}

/** Holds in the lock order of their positions (item; one facility per order), then by id. */
const byPosition = (a: ReservationView, b: ReservationView) => (a.itemId < b.itemId ? -1 : a.itemId > b.itemId ? 1 : a.id < b.id ? -1 : 1);

/** A known item of any kind (404 naming the field), active (409): new order lines. */
function activeItem(items: Map<string, ItemRef>, id: string, field: string): ItemRef {
  const item = items.get(id);
  if (!item) throw unknownReference(field);
  if (!item.isActive) throw invalidState(`Item ${item.itemNo} is inactive`);
  return item;
}
