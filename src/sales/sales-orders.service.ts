import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { AppError, ErrorDetail, insufficientStock, invalidState, notFound, unknownReference } from '../common/errors';
import { likePattern, page } from '../common/pagination';
import { SqlFilters } from '../database/filters.sql';
import { UnitOfWork } from '../database/unit-of-work';
import { DocumentStore } from '../documents/document-store';
import { DocumentNumbers } from '../documents/numbering.sql';
import { qty as toQty, sql, sum } from '../documents/quantity';
import { activeItem, CatalogRefs } from '../documents/references.sql';
import { UomConversion } from '../documents/uom-conversion.sql';
import { LedgerService } from '../inventory/ledger/ledger.service';
import { IssueLine } from '../inventory/ledger/posting';
import { ReservationView } from '../inventory/ledger/views';
import { CustomersService } from './customers.service';
import { byPosition, HOLDING, SALES_ORDER, SalesOrderView, SO_COLUMNS, SoLineRow, SoRow, soView } from './sales-order-rows';
import { outstanding, SalesShipping } from './sales-shipping';
import { CreateSalesOrderDto, SalesOrderLineDto, SalesOrderQuery, ShipSalesOrderDto, SoStatus, UpdateSalesOrderDto } from './sales.dto';

/** A checked order line: quantity in its UOM, and in base units (rounded up). */
interface NewSoLine {
  itemId: string;
  uomId: string;
  qty: Decimal;
  qtyBase: Decimal;
  unitPrice: Decimal;
}

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
    private readonly shipping: SalesShipping,
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
    const shipping = dto.lines?.length ? await this.shipping.requested(o, lines, items, dto.lines) : outstanding(lines, items);
    const holds = await this.shipping.allocateFor(shipping);
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
    await this.shipping.closeCompleted(shipping, holds);
    const [{ complete }]: Array<{ complete: boolean }> = await this.m.query(
      `SELECT bool_and(qty_shipped >= qty) AS complete FROM sales_order_lines WHERE tenant_id = $1 AND sales_order_id = $2`,
      [this.uow.tenantId, id],
    );
    await this.store.touch(id, 'status = $4', [complete ? 'shipped' : 'partially_shipped']);
    return this.get(id);
  }

  /**
   * → cancelled: every line's hold that still holds stock is cancelled, all in one lock pass; what
   * shipped stays shipped.
   */
  async cancel(id: string, ifMatch?: number): Promise<SalesOrderView> {
    await this.store.lockFor('cancel', id, ifMatch);
    const lines = await this.linesOf([id]);
    await this.ledger.releaseAll(lines.flatMap((l) => (l.reservation_id ? [l.reservation_id] : [])), 'cancelled');
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
