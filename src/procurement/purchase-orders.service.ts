import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { invalidState, notFound, validationFailed } from '../common/errors';
import { likePattern, page } from '../common/pagination';
import { UnitOfWork } from '../database/unit-of-work';
import { DocumentStore } from '../documents/document-store';
import { DocumentNumbers } from '../documents/numbering.sql';
import { sql as numeric, qty as toQty, sum } from '../documents/quantity';
import { activeItem, CatalogRefs } from '../documents/references.sql';
import { UomConversion } from '../documents/uom-conversion.sql';
import { CreatePurchaseOrderDto, PoStatus, PurchaseOrderLineDto, PurchaseOrderQuery, UpdatePurchaseOrderDto } from './procurement.dto';
import { poView, PURCHASE_ORDER, PurchaseOrderView } from './purchase-order-rows';
import { PurchaseOrder, PurchaseOrderLine } from './purchase-order.entity';
import { SuppliersService } from './suppliers.service';
import { cursorOf, newestFirst } from '../common/cursor';
import { keysetPageOf } from '../database/keyset-page';

/** The list's documented order (cursor paging: src/common/cursor.ts). */
const PURCHASE_ORDERS = newestFirst('purchase-orders', 'o');

/** A checked order line: quantity in its UOM, and in base units (rounded up). */
export interface NewPoLine {
  itemId: string;
  uomId: string;
  qtyOrdered: Decimal;
  qtyOrderedBase: Decimal;
  unitPrice: Decimal;
}

/** Purchase orders (their goods receipts: GoodsReceiptsService). */
@Injectable()
export class PurchaseOrdersService {
  /** The orders' rows: locked, checked and stamped here and by GoodsReceiptsService. */
  readonly store: DocumentStore<PurchaseOrder, PoStatus, keyof typeof PURCHASE_ORDER.table>;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly uoms: UomConversion,
    private readonly numbers: DocumentNumbers,
    private readonly suppliers: SuppliersService,
  ) {
    this.store = new DocumentStore(uow, PurchaseOrder, PURCHASE_ORDER, (o) => o.poNo);
  }

  private get repo() {
    return this.uow.repository(PurchaseOrder);
  }

  private get lineRepo() {
    return this.uow.repository(PurchaseOrderLine);
  }

  /** Newest first (createdAt, then id); q: order number or supplier name (purchase_order_search, index-backed under RLS). */
  async list(query: PurchaseOrderQuery) {
    const at = cursorOf(PURCHASE_ORDERS, query);
    const qb = this.repo.createQueryBuilder('o');
    if (query.status) qb.where('o.status = :status', { status: query.status });
    if (query.supplierId) qb.where('o.supplierId = :supplierId', { supplierId: query.supplierId });
    if (query.facilityId) qb.where('o.facilityId = :facilityId', { facilityId: query.facilityId });
    if (query.q) qb.where('o.id IN (SELECT id FROM purchase_order_search(:q))', { q: likePattern(query.q) });
    const { rows, count, nextCursor } = await keysetPageOf(qb, PURCHASE_ORDERS, query, at);
    const lines = await this.lines(rows.map((r) => r.id));
    return page(rows.map((r) => poView(r, lines.filter((l) => l.purchaseOrderId === r.id))), count, query, nextCursor);
  }

  async get(id: string): Promise<PurchaseOrderView> {
    const row = await this.repo.findOne({ id });
    if (!row) throw notFound('Purchase order');
    return poView(row, await this.lines([id]));
  }

  async create(dto: CreatePurchaseOrderDto): Promise<PurchaseOrderView> {
    const lines = dto.lines ?? [];
    const supplier = await this.suppliers.reference(dto.supplierId, 'supplierId');
    await this.refs.facility(dto.facilityId, 'facilityId', 'new');
    const checked = await this.checkLines(lines);
    return this.insert({
      supplierId: supplier.id, facilityId: dto.facilityId, currency: dto.currency ?? supplier.currency,
      orderDate: dto.orderDate ?? null, expectedDate: dto.expectedDate ?? null, notes: dto.notes ?? null, requisitionId: null,
    }, checked);
  }

  /**
   * Writes a new draft order with checked lines (numbered 1..n): for `create` and for requisitions
   * converted to orders. The number is taken last, just before the insert.
   */
  async insert(
    h: { supplierId: string; facilityId: string; currency: string; orderDate: string | null; expectedDate: string | null; notes: string | null; requisitionId: string | null },
    lines: NewPoLine[],
  ): Promise<PurchaseOrderView> {
    const id = randomUUID();
    const poNo = await this.numbers.next('PO');
    await this.repo.insert({
      id, poNo, supplierId: h.supplierId, facilityId: h.facilityId, status: 'draft', currency: h.currency,
      // Default today in UTC, as the database sees it.
      orderDate: h.orderDate ?? (() => `(now() AT TIME ZONE 'UTC')::date`),
      expectedDate: h.expectedDate, notes: h.notes, totalAmount: numeric(total(lines)), requisitionId: h.requisitionId,
      createdBy: this.uow.userId, updatedBy: this.uow.userId,
    });
    await this.writeLines(id, lines);
    return this.get(id);
  }

  /** Draft only. A given `lines` replaces all lines; the total follows the lines. */
  async update(id: string, dto: UpdatePurchaseOrderDto, ifMatch?: number): Promise<PurchaseOrderView> {
    const o = await this.store.lockFor('change', id, ifMatch);
    if (Object.values(dto).every((v) => v === undefined)) return this.get(id);
    const supplier = dto.supplierId !== undefined ? await this.suppliers.reference(dto.supplierId, 'supplierId') : undefined;
    if (dto.facilityId !== undefined) await this.refs.facility(dto.facilityId, 'facilityId', 'new');
    let totalAmount = toQty(o.totalAmount);
    if (dto.lines) {
      const lines = await this.checkLines(dto.lines);
      await this.lineRepo.delete({ purchaseOrderId: id });
      await this.writeLines(id, lines);
      totalAmount = total(lines);
    }
    const pick = <T>(given: T | undefined, stored: T) => (given === undefined ? stored : given);
    await this.store.touch(id, {
      supplierId: pick(dto.supplierId, o.supplierId), facilityId: pick(dto.facilityId, o.facilityId),
      // A new supplier brings its currency unless one is given.
      currency: dto.currency ?? supplier?.currency ?? o.currency,
      orderDate: pick(dto.orderDate, o.orderDate), expectedDate: pick(dto.expectedDate, o.expectedDate), notes: pick(dto.notes, o.notes),
      totalAmount: numeric(totalAmount),
    });
    return this.get(id);
  }

  async submit(id: string, ifMatch?: number): Promise<PurchaseOrderView> {
    const o = await this.store.lockFor('submit', id, ifMatch);
    if (!(await this.lineRepo.findOne({ purchaseOrderId: id }))) throw invalidState(`Purchase order ${o.poNo} has no lines; add one before submitting`);
    await this.store.move(id, 'submit');
    return this.get(id);
  }

  async approve(id: string, ifMatch?: number): Promise<PurchaseOrderView> {
    return this.act(id, 'approve', ifMatch);
  }

  async send(id: string, ifMatch?: number): Promise<PurchaseOrderView> {
    return this.act(id, 'send', ifMatch);
  }

  async cancel(id: string, ifMatch?: number): Promise<PurchaseOrderView> {
    return this.act(id, 'cancel', ifMatch);
  }

  private async act(id: string, action: 'approve' | 'send' | 'cancel', ifMatch?: number): Promise<PurchaseOrderView> {
    await this.store.lockFor(action, id, ifMatch);
    await this.store.move(id, action);
    return this.get(id);
  }

  /**
   * Lines of a new or changed draft (new work): known, active items (any kind: services and non-stock
   * goods are bought too, they just post no stock); quantity in the line's UOM, also in base units.
   */
  async checkLines(lines: Array<PurchaseOrderLineDto & { field?: string }>): Promise<NewPoLine[]> {
    const items = await this.refs.items(lines.map((l) => l.itemId));
    const checked: NewPoLine[] = [];
    for (const [i, line] of lines.entries()) {
      const f = line.field ?? `lines[${i}]`;
      const item = activeItem(items, line.itemId, `${f}.itemId`);
      if ((line.qtyOrdered === undefined) === (line.qty === undefined))
        throw validationFailed(`${f}.qtyOrdered is required (or its alias qty, not both)`, [{ field: `${f}.qtyOrdered`, message: 'give qtyOrdered (or qty)' }]);
      const qtyOrdered = (line.qtyOrdered ?? line.qty)!;
      const qtyOrderedBase = await this.uoms.toBase(item, line.uomId, qtyOrdered, `${f}.qtyOrdered`);
      checked.push({ itemId: item.id, uomId: line.uomId ?? item.baseUomId, qtyOrdered: toQty(qtyOrdered), qtyOrderedBase, unitPrice: toQty(line.unitPrice) });
    }
    return checked;
  }

  private async writeLines(orderId: string, lines: NewPoLine[]): Promise<void> {
    // One INSERT of all lines (the repository writes an array as one statement).
    await this.lineRepo.insert(lines.map((l, i) => ({
      id: randomUUID(), purchaseOrderId: orderId, lineNo: i + 1, itemId: l.itemId, uomId: l.uomId,
      qtyOrdered: numeric(l.qtyOrdered), unitPrice: numeric(l.unitPrice), qtyOrderedBase: numeric(l.qtyOrderedBase),
    })));
  }

  /** The lines of orders, in order and line order. */
  lines(ids: string[]): Promise<PurchaseOrderLine[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.lineRepo
      .createQueryBuilder('l')
      .where('l.purchaseOrderId = ANY(:ids)', { ids })
      .orderBy('l.purchaseOrderId')
      .addOrderBy('l.lineNo')
      .getMany();
  }
}

/** Σ qty × unitPrice, exactly. */
const total = (lines: NewPoLine[]) => sum(lines.map((l) => l.qtyOrdered.times(l.unitPrice)));
