import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { In } from 'typeorm';
import { AppError, ErrorDetail, insufficientStock, invalidState } from '../common/errors';
import { likePattern, page } from '../common/pagination';
import { UnitOfWork } from '../database/unit-of-work';
import { DocumentStore } from '../documents/document-store';
import { DocumentNumbers } from '../documents/numbering.sql';
import { sql as numeric, Qty, qty as toQty, sum } from '../documents/quantity';
import { activeItem, CatalogRefs } from '../documents/references.sql';
import { UomConversion } from '../documents/uom-conversion.sql';
import { LedgerService } from '../inventory/ledger/ledger.service';
import { IssueLine } from '../inventory/ledger/posting';
import { CustomersService } from './customers.service';
import { SalesOrder, SalesOrderLine } from './sales-order.entity';
import { SALES_ORDER, soView } from './sales-order-views';
import { addShipped, insertLines, NewSoLine, setReservations } from './sales-orders.sql';
import { outstanding, SalesShipping } from './sales-shipping';
import { CreateSalesOrderDto, SalesOrderLineDto, SalesOrderQuery, ShipSalesOrderDto, SoStatus, UpdateSalesOrderDto } from './sales.dto';
import { SalesOrderResponse } from './sales.responses';
import { cursorOf, newestFirst } from '../common/cursor';
import { keysetPageOf } from '../database/keyset-page';

/** The list's documented order (cursor paging: src/common/cursor.ts). */
const SALES_ORDERS = newestFirst('sales-orders', 'o');

/** Sales orders: reserve on open, ship through one ledger posting per call, release on cancel. */
@Injectable()
export class SalesOrdersService {
  private readonly store: DocumentStore<SalesOrder, SoStatus, keyof typeof SALES_ORDER.table>;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly uoms: UomConversion,
    private readonly numbers: DocumentNumbers,
    private readonly ledger: LedgerService,
    private readonly customers: CustomersService,
    private readonly shipping: SalesShipping,
  ) {
    this.store = new DocumentStore(uow, SalesOrder, SALES_ORDER, (o) => o.orderNo);
  }

  private get orders() {
    return this.uow.repository(SalesOrder);
  }

  private get lines() {
    return this.uow.repository(SalesOrderLine);
  }

  /** Newest first (createdAt, then id); q: order number or customer name (sales_order_search, index-backed under RLS). */
  async list(query: SalesOrderQuery) {
    const at = cursorOf(SALES_ORDERS, query);
    const qb = this.orders.createQueryBuilder('o');
    if (query.status) qb.where('o.status = :status', { status: query.status });
    if (query.customerId) qb.where('o.customerId = :customerId', { customerId: query.customerId });
    if (query.facilityId) qb.where('o.facilityId = :facilityId', { facilityId: query.facilityId });
    if (query.q) qb.where('o.id IN (SELECT id FROM sales_order_search(:q))', { q: likePattern(query.q) });
    const { rows, count, nextCursor } = await keysetPageOf(qb, SALES_ORDERS, query, at);
    const lines = await this.linesOf(rows.map((r) => r.id));
    return page(rows.map((r) => this.view(r, lines.filter((l) => l.salesOrderId === r.id))), count, query, nextCursor);
  }

  async get(id: string): Promise<SalesOrderResponse> {
    const order = await this.store.find(id);
    return this.view(order, await this.linesOf([id]));
  }

  /** Creates a draft: the body's fields as they are (the entity's columns), its lines numbered 1..n. */
  async create(dto: CreateSalesOrderDto): Promise<SalesOrderResponse> {
    const { lines: given, ...fields } = dto;
    await this.customers.reference(dto.customerId, 'customerId');
    await this.refs.facility(dto.facilityId, 'facilityId', 'new');
    const lines = await this.checkLines(given ?? []);
    const id = randomUUID();
    const orderNo = await this.numbers.next('SO');
    await this.orders.insert({
      ...fields,
      id,
      orderNo,
      status: 'draft',
      totalAmount: numeric(total(lines)),
      createdBy: this.uow.userId,
      updatedBy: this.uow.userId,
    });
    if (lines.length) await insertLines(this.uow.manager, this.uow.tenantId, id, lines);
    return this.get(id);
  }

  /** Draft only. The given fields change (null clears an optional one); a given `lines` replaces all lines, and the total follows them. */
  async update(id: string, dto: UpdateSalesOrderDto, ifMatch?: number): Promise<SalesOrderResponse> {
    await this.store.lockFor('change', id, ifMatch);
    const { lines: given, ...fields } = dto;
    const changed = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<SalesOrder>;
    if (!Object.keys(changed).length && given === undefined) return this.get(id);
    if (changed.customerId !== undefined) await this.customers.reference(changed.customerId, 'customerId');
    if (changed.facilityId !== undefined) await this.refs.facility(changed.facilityId, 'facilityId', 'new');
    if (given) {
      const lines = await this.checkLines(given);
      await this.lines.delete({ salesOrderId: id });
      if (lines.length) await insertLines(this.uow.manager, this.uow.tenantId, id, lines);
      changed.totalAmount = numeric(total(lines));
    }
    await this.store.touch(id, changed);
    return this.get(id);
  }

  /**
   * draft → open: one reservation per stock line at the order's facility, in base units, all or nothing
   * (LedgerService.reserveAll: every line is checked against available-to-promise first, lines of one
   * item together, and a shortage is one 409 insufficient_stock naming every short line).
   */
  async open(id: string, ifMatch?: number): Promise<SalesOrderResponse> {
    const o = await this.store.lockFor('open', id, ifMatch);
    const lines = await this.linesOf([id]);
    if (!lines.length) throw invalidState(`Sales order ${o.orderNo} has no lines; add one before opening it`);
    // Opening commits the order: the customer, the facility and every item must still be active.
    await this.customers.reference(o.customerId, 'customerId');
    await this.refs.facility(o.facilityId, 'facilityId', 'new');
    const items = await this.refs.items(lines.map((l) => l.itemId));
    for (const l of lines) activeItem(items, l.itemId, `lines[${l.lineNo - 1}].itemId`);
    // Reserved in the positions' lock order (item id), so orders opened together queue rather than deadlock.
    const stock = lines
      .filter((l) => items.get(l.itemId)!.kind === 'stock')
      .sort((a, b) => (a.itemId < b.itemId ? -1 : a.itemId > b.itemId ? 1 : a.lineNo - b.lineNo));
    const reservationIds = await this.reserveAll(o, stock);
    if (stock.length) await setReservations(this.uow.manager, this.uow.tenantId, id, stock.map((l) => l.id), reservationIds);
    await this.store.move(id, 'open');
    return this.get(id);
  }

  /** The stock lines' holds; a shortage names the order, and each short line by field, id and number. */
  private async reserveAll(o: SalesOrder, stock: SalesOrderLine[]): Promise<string[]> {
    const field = (l: SalesOrderLine) => `lines[${l.lineNo - 1}]`;
    try {
      return await this.ledger.reserveAll(
        stock.map((l) => ({ itemId: l.itemId, facilityId: o.facilityId, qty: l.qtyBase, demandType: 'sales_order', demandId: o.id, demandLineId: l.id, field: field(l) })),
      );
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'insufficient_stock') throw err;
      const lineOf = (d: ErrorDetail) => stock.find((l) => d.field === field(l) || d.field?.startsWith(`${field(l)}.`));
      throw insufficientStock(
        `Sales order ${o.orderNo} cannot open: ${err.message}${(err.details?.length ?? 0) > 1 ? ` (${err.details!.length} short lines)` : ''}`,
        // In line order (the holds were reserved in item order).
        err.details?.map((d) => ({ ...d, lineId: lineOf(d)?.id, lineNo: lineOf(d)?.lineNo })).sort((a, b) => (a.lineNo ?? 0) - (b.lineNo ?? 0)),
      );
    }
  }

  /**
   * Ships the given quantities (in the lines' UOMs), or everything outstanding. The stock lines' holds
   * are allocated first where they do not cover what ships (at `locationId` when given, else
   * automatically, earliest expiry first), then one `shipment` posting issues from them all.
   */
  async ship(id: string, dto: ShipSalesOrderDto, ifMatch?: number): Promise<SalesOrderResponse> {
    const o = await this.store.lockFor('ship', id, ifMatch);
    const lines = await this.linesOf([id]);
    const items = await this.refs.items(lines.map((l) => l.itemId));
    const shipping = dto.lines?.length ? await this.shipping.requested(o, lines, items, dto.lines) : outstanding(lines, items);
    const holds = await this.shipping.allocateFor(shipping);
    const issues = shipping
      .filter((s) => s.line.reservationId && s.base.gt(0))
      .map((s): IssueLine => ({
        reservationId: s.line.reservationId!, qty: s.base, locationId: s.locationId ?? null, lotId: s.lotId ?? null, serialNos: s.serialNos ?? null, field: s.field,
      }));
    // The header is locked, so the lines read above plus what shipped now are the lines as they stand.
    const shippedNow = new Map<string, Qty>();
    for (const s of shipping) shippedNow.set(s.line.id, (shippedNow.get(s.line.id) ?? toQty(0)).plus(s.qty));
    const complete = lines.every((l) => toQty(l.qtyShipped).plus(shippedNow.get(l.id) ?? 0).gte(l.qty));
    await addShipped(this.uow.manager, this.uow.tenantId, id, shipping.map((s) => ({ lineId: s.line.id, qty: s.qty, base: s.base })));
    await this.store.touch(id, { status: complete ? 'shipped' : 'partially_shipped' });
    // The posting after the order's own rows: the tenant's TX counter row stays locked from it to COMMIT.
    if (issues.length) await this.ledger.post({ type: 'shipment', sourceType: 'sales_order', sourceId: id, lines: issues });
    await this.shipping.closeCompleted(shipping, holds);
    return this.get(id);
  }

  /**
   * → cancelled: every line's hold that still holds stock is cancelled, all in one lock pass; what
   * shipped stays shipped.
   */
  async cancel(id: string, ifMatch?: number): Promise<SalesOrderResponse> {
    await this.store.lockFor('cancel', id, ifMatch);
    const lines = await this.linesOf([id]);
    await this.ledger.releaseAll(lines.flatMap((l) => (l.reservationId ? [l.reservationId] : [])), 'cancelled');
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

  /** The lines of the given orders, by order and line number. */
  private linesOf(ids: string[]): Promise<SalesOrderLine[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.lines.find({ where: { salesOrderId: In(ids) }, order: { salesOrderId: 'ASC', lineNo: 'ASC' } });
  }

  private view(o: SalesOrder, lines: SalesOrderLine[]): SalesOrderResponse {
    return soView({ order: this.orders.metadata, line: this.lines.metadata }, o, lines);
  }
}

/** Σ qty × unitPrice, exactly. */
const total = (lines: NewSoLine[]) => sum(lines.map((l) => l.qty.times(l.unitPrice)));
