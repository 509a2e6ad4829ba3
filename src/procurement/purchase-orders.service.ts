import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { invalidState, notFound, validationFailed } from '../common/errors';
import { likePattern, page } from '../common/pagination';
import { SqlFilters } from '../database/filters.sql';
import { UnitOfWork } from '../database/unit-of-work';
import { DocumentStore } from '../documents/document-store';
import { DocumentNumbers } from '../documents/numbering.sql';
import { qty as toQty, sql, sum } from '../documents/quantity';
import { activeItem, CatalogRefs } from '../documents/references.sql';
import { UomConversion } from '../documents/uom-conversion.sql';
import { CreatePurchaseOrderDto, PoStatus, PurchaseOrderLineDto, PurchaseOrderQuery, UpdatePurchaseOrderDto } from './procurement.dto';
import { PO_COLUMNS, PoLineRow, PoRow, poView, PURCHASE_ORDER, PurchaseOrderView } from './purchase-order-rows';
import { SuppliersService } from './suppliers.service';

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
  readonly store: DocumentStore<PoRow, PoStatus, keyof typeof PURCHASE_ORDER.table>;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly uoms: UomConversion,
    private readonly numbers: DocumentNumbers,
    private readonly suppliers: SuppliersService,
  ) {
    this.store = new DocumentStore(uow, 'purchase_orders', PURCHASE_ORDER, (r) => r.po_no);
  }

  private get m() {
    return this.uow.manager;
  }

  /** Newest first (createdAt, then id); q: order number or supplier name (purchase_order_search, index-backed under RLS). */
  async list(query: PurchaseOrderQuery) {
    const f = new SqlFilters(this.uow.tenantId)
      .add('status = ?', query.status)
      .add('supplier_id = ?', query.supplierId)
      .add('facility_id = ?', query.facilityId)
      .add('id IN (SELECT id FROM purchase_order_search(?))', query.q && likePattern(query.q));
    const { rows, count } = await f.pageOf<PoRow>(this.m, `SELECT ${PO_COLUMNS} FROM purchase_orders WHERE ${f.where}`, 'created_at DESC, id DESC', query);
    const lines = await this.lines(rows.map((r) => r.id));
    return page(rows.map((r) => poView(r, lines.filter((l) => l.purchase_order_id === r.id))), count, query);
  }

  async get(id: string): Promise<PurchaseOrderView> {
    const [row]: PoRow[] = await this.m.query(`SELECT ${PO_COLUMNS} FROM purchase_orders WHERE tenant_id = $1 AND id = $2`, [this.uow.tenantId, id]);
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
    await this.m.query(
      `INSERT INTO purchase_orders (tenant_id, id, po_no, supplier_id, facility_id, status, currency, order_date, expected_date, notes,
                                    total_amount, requisition_id, created_by, updated_by)
       VALUES ($1, $2, $3, $4, $5, 'draft', $6, coalesce($7::date, (now() AT TIME ZONE 'UTC')::date), $8, $9, $10, $11, $12, $12)`,
      [this.uow.tenantId, id, poNo, h.supplierId, h.facilityId, h.currency, h.orderDate, h.expectedDate, h.notes, sql(total(lines)), h.requisitionId, this.uow.userId],
    );
    await this.writeLines(id, lines);
    return this.get(id);
  }

  /** Draft only. A given `lines` replaces all lines; the total follows the lines. */
  async update(id: string, dto: UpdatePurchaseOrderDto, ifMatch?: number): Promise<PurchaseOrderView> {
    const o = await this.store.lockFor('change', id, ifMatch);
    if (Object.values(dto).every((v) => v === undefined)) return this.get(id);
    const supplier = dto.supplierId !== undefined ? await this.suppliers.reference(dto.supplierId, 'supplierId') : undefined;
    if (dto.facilityId !== undefined) await this.refs.facility(dto.facilityId, 'facilityId', 'new');
    let totalAmount = toQty(o.total_amount);
    if (dto.lines) {
      const lines = await this.checkLines(dto.lines);
      await this.m.query(`DELETE FROM purchase_order_lines WHERE tenant_id = $1 AND purchase_order_id = $2`, [this.uow.tenantId, id]);
      await this.writeLines(id, lines);
      totalAmount = total(lines);
    }
    const pick = <T>(given: T | undefined, stored: T) => (given === undefined ? stored : given);
    await this.store.touch(
      id,
      'supplier_id = $4, facility_id = $5, currency = $6, order_date = $7, expected_date = $8, notes = $9, total_amount = $10',
      [
        pick(dto.supplierId, o.supplier_id), pick(dto.facilityId, o.facility_id),
        // A new supplier brings its currency unless one is given.
        dto.currency ?? supplier?.currency ?? o.currency,
        pick(dto.orderDate, o.order_date), pick(dto.expectedDate, o.expected_date), pick(dto.notes, o.notes), sql(totalAmount),
      ],
    );
    return this.get(id);
  }

  async submit(id: string, ifMatch?: number): Promise<PurchaseOrderView> {
    const o = await this.store.lockFor('submit', id, ifMatch);
    if (!(await this.lines([id])).length) throw invalidState(`Purchase order ${o.po_no} has no lines; add one before submitting`);
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
    if (!lines.length) return;
    await this.m.query(
      `INSERT INTO purchase_order_lines (tenant_id, id, purchase_order_id, line_no, item_id, uom_id, qty_ordered, unit_price, qty_ordered_base)
       SELECT $1, gen_random_uuid(), $2, k.ord, k.item_id, k.uom_id, k.qty, k.price, k.base
         FROM unnest($3::uuid[], $4::uuid[], $5::numeric[], $6::numeric[], $7::numeric[]) WITH ORDINALITY AS k(item_id, uom_id, qty, price, base, ord)`,
      [this.uow.tenantId, orderId, lines.map((l) => l.itemId), lines.map((l) => l.uomId), lines.map((l) => sql(l.qtyOrdered)), lines.map((l) => sql(l.unitPrice)), lines.map((l) => sql(l.qtyOrderedBase))],
    );
  }

  /** The lines of orders, in order and line order. */
  lines(ids: string[]): Promise<PoLineRow[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.m.query(
      `SELECT id, purchase_order_id, line_no, item_id, uom_id, qty_ordered, unit_price, qty_received, qty_ordered_base, qty_received_base
         FROM purchase_order_lines WHERE tenant_id = $1 AND purchase_order_id = ANY($2::uuid[]) ORDER BY purchase_order_id, line_no`,
      [this.uow.tenantId, ids],
    );
  }
}

/** Σ qty × unitPrice, exactly. */
const total = (lines: NewPoLine[]) => sum(lines.map((l) => l.qtyOrdered.times(l.unitPrice)));
