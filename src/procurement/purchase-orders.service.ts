import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { AppError, ErrorDetail, invalidField, invalidState, notFound, unknownReference, validationFailed } from '../common/errors';
import { likePattern, page } from '../common/pagination';
import { SqlFilters } from '../common/sql-filters';
import { UnitOfWork } from '../database/unit-of-work';
import { auditView, DocumentRow, DocumentStore, Transitions } from '../documents/document-store';
import { DocumentNumbers } from '../documents/numbering';
import { num, qty as toQty, sql, sum } from '../documents/quantity';
import { CatalogRefs, ItemRef } from '../documents/references';
import { UomConversion } from '../documents/uom-conversion';
import { LedgerService } from '../inventory/ledger/ledger.service';
import { PostingLine } from '../inventory/ledger/posting';
import {
  CreatePurchaseOrderDto, CreateReceiptDto, PoStatus, PurchaseOrderLineDto, PurchaseOrderQuery, UpdatePurchaseOrderDto,
} from './procurement.dto';
import { SuppliersService } from './suppliers.service';

interface PoRow extends DocumentRow {
  po_no: string;
  supplier_id: string;
  facility_id: string;
  currency: string;
  order_date: string;
  expected_date: string | null;
  notes: string | null;
  total_amount: string;
  requisition_id: string | null;
}

interface PoLineRow {
  id: string;
  purchase_order_id: string;
  line_no: number;
  item_id: string;
  uom_id: string;
  qty_ordered: string;
  unit_price: string;
  qty_received: string;
  qty_ordered_base: string;
}

interface ReceiptRow {
  id: string;
  receipt_no: string;
  purchase_order_id: string;
  received_at: Date;
  transaction_id: string | null;
  notes: string | null;
  created_by: string;
  created_at: Date;
  lines: Array<{
    line_no: number; po_line_id: string; item_id: string; qty: string; location_id: string | null; lot_no: string | null;
    expiry_date: string | null; serial_nos: string[] | null; status_id: string | null;
  }>;
}

/** A checked order line: quantity in its UOM, and in base units (rounded up). */
export interface NewPoLine {
  itemId: string;
  uomId: string;
  qtyOrdered: Decimal;
  qtyOrderedBase: Decimal;
  unitPrice: Decimal;
}

const PO_COLUMNS = `id, po_no, supplier_id, facility_id, status, currency, to_char(order_date, 'YYYY-MM-DD') AS order_date,
  to_char(expected_date, 'YYYY-MM-DD') AS expected_date, notes, total_amount, requisition_id, version, created_by, updated_by, created_at, updated_at`;

const poView = (o: PoRow, lines: PoLineRow[]) => ({
  id: o.id,
  poNo: o.po_no,
  supplierId: o.supplier_id,
  facilityId: o.facility_id,
  status: o.status as PoStatus,
  currency: o.currency,
  orderDate: o.order_date,
  expectedDate: o.expected_date,
  notes: o.notes,
  lines: lines.map((l) => ({
    id: l.id,
    lineNo: l.line_no,
    itemId: l.item_id,
    qtyOrdered: num(l.qty_ordered),
    uomId: l.uom_id,
    unitPrice: num(l.unit_price),
    qtyReceived: num(l.qty_received),
  })),
  totalAmount: num(o.total_amount),
  requisitionId: o.requisition_id,
  ...auditView(o),
});
export type PurchaseOrderView = ReturnType<typeof poView>;

const receiptView = (r: ReceiptRow) => ({
  id: r.id,
  receiptNo: r.receipt_no,
  purchaseOrderId: r.purchase_order_id,
  receivedAt: r.received_at,
  transactionId: r.transaction_id,
  notes: r.notes,
  lines: r.lines.map((l) => ({
    lineNo: l.line_no,
    poLineId: l.po_line_id,
    itemId: l.item_id,
    qty: num(l.qty),
    locationId: l.location_id,
    lotNo: l.lot_no,
    expiryDate: l.expiry_date,
    serialNos: l.serial_nos ?? [],
    statusId: l.status_id,
  })),
  createdBy: r.created_by,
  createdAt: r.created_at,
});
export type ReceiptView = ReturnType<typeof receiptView>;

/**
 * draft →submit→ submitted →approve→ approved →send→ sent; receipts from approved, sent and
 * partially_received (→ partially_received, then received); cancel from draft|submitted|approved|sent
 * (a received quantity moves the order to partially_received, so "while nothing is received" holds by
 * construction). PATCH is the `change` action.
 */
export const PURCHASE_ORDER = new Transitions<PoStatus, 'change' | 'submit' | 'approve' | 'send' | 'receive' | 'cancel'>('Purchase order', {
  change: { from: ['draft'] },
  submit: { from: ['draft'], to: 'submitted' },
  approve: { from: ['submitted'], to: 'approved' },
  send: { from: ['approved'], to: 'sent' },
  receive: { from: ['approved', 'sent', 'partially_received'] },
  cancel: { from: ['draft', 'submitted', 'approved', 'sent'], to: 'cancelled' },
});

/** Purchase orders and their goods receipts. */
@Injectable()
export class PurchaseOrdersService {
  private readonly store: DocumentStore<PoRow, PoStatus, keyof typeof PURCHASE_ORDER.table>;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly uoms: UomConversion,
    private readonly numbers: DocumentNumbers,
    private readonly ledger: LedgerService,
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
    const lines = await this.linesOf(rows.map((r) => r.id));
    return page(rows.map((r) => poView(r, lines.filter((l) => l.purchase_order_id === r.id))), count, query);
  }

  async get(id: string): Promise<PurchaseOrderView> {
    const [row]: PoRow[] = await this.m.query(`SELECT ${PO_COLUMNS} FROM purchase_orders WHERE tenant_id = $1 AND id = $2`, [this.uow.tenantId, id]);
    if (!row) throw notFound('Purchase order');
    return poView(row, await this.linesOf([id]));
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
    if (!(await this.linesOf([id])).length) throw invalidState(`Purchase order ${o.po_no} has no lines; add one before submitting`);
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
   * A goods receipt: one `receipt` ledger transaction (source: the receipt) for its stock lines, in base
   * units, and the order lines' qtyReceived, in one unit of work. The order row is locked first, so two
   * receipts of one order queue and the second sees what the first received (409 over_receipt beyond the
   * open quantity; the lines' CHECK is the database's last word).
   */
  async receive(id: string, dto: CreateReceiptDto, ifMatch?: number): Promise<ReceiptView> {
    const o = await this.store.lockFor('receive', id, ifMatch);
    const poLines = new Map((await this.linesOf([id])).map((l) => [l.id, l]));
    const items = await this.refs.items([...poLines.values()].map((l) => l.item_id));
    const locations = await this.refs.locations(dto.lines.map((l) => l.locationId).filter((x): x is string => !!x));
    const statuses = await this.refs.statuses();
    const receiving = new Map<string, Decimal>();
    const postings: PostingLine[] = [];
    const rows: Array<{ poLine: PoLineRow; qty: Decimal; base: Decimal; locationId: string | null; statusId: string | null }> = [];
    for (const [i, line] of dto.lines.entries()) {
      const f = `lines[${i}]`;
      const poLine = poLines.get(line.poLineId);
      if (!poLine) throw unknownReference(`${f}.poLineId`);
      const item = items.get(poLine.item_id)!;
      const qty = toQty(line.qty);
      receiving.set(poLine.id, (receiving.get(poLine.id) ?? toQty(0)).plus(qty));
      const base = await this.uoms.toBase(item, poLine.uom_id, line.qty, `${f}.qty`);
      if (item.kind === 'stock') {
        if (!line.locationId) throw invalidField(`${f}.locationId`, 'is required for a stock item');
        // Receiving finishes an approved order: an item or location deactivated since is not refused.
        this.refs.location(locations, line.locationId, `${f}.locationId`, 'committed', o.facility_id);
        const status = this.refs.status(statuses, line.statusId, `${f}.statusId`);
        postings.push({
          itemId: item.id, locationId: line.locationId, statusId: status.id, qty: base,
          lotNo: line.lotNo ?? null, expiryDate: line.expiryDate ?? null, serialNos: line.serialNos ?? null, field: f,
        });
      } else {
        for (const k of ['locationId', 'statusId', 'lotNo', 'expiryDate', 'serialNos'] as const)
          if (line[k] !== undefined) throw invalidField(`${f}.${k}`, `must not be given: ${item.itemNo} is a ${item.kind} item and carries no stock`);
      }
      const statusId = item.kind === 'stock' ? this.refs.status(statuses, line.statusId, `${f}.statusId`).id : null;
      rows.push({ poLine, qty, base, locationId: line.locationId ?? null, statusId });
    }
    const over: ErrorDetail[] = [];
    for (const [poLineId, qty] of receiving) {
      const l = poLines.get(poLineId)!;
      const open = toQty(l.qty_ordered).minus(l.qty_received);
      if (qty.gt(open)) over.push({ field: 'lines', poLineId, lineNo: l.line_no, itemId: l.item_id, requested: qty.toNumber(), open: open.toNumber(), message: 'exceeds the open quantity' });
    }
    if (over.length) {
      throw new AppError(409, 'over_receipt', `Receipt exceeds the open quantity of purchase order ${o.po_no} line ${over[0].lineNo}: requested ${over[0].requested}, open ${over[0].open}`, over);
    }

    const receiptId = randomUUID();
    const txn = postings.length
      ? await this.ledger.post({ type: 'receipt', sourceType: 'receipt', sourceId: receiptId, lines: postings })
      : undefined;
    const receiptNo = await this.numbers.next('GR');
    await this.m.query(
      `WITH r AS (
         INSERT INTO receipts (tenant_id, id, receipt_no, purchase_order_id, transaction_id, notes, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id)
       INSERT INTO receipt_lines (tenant_id, receipt_id, line_no, po_line_id, item_id, qty, location_id, lot_no, expiry_date, serial_nos, status_id)
       SELECT $1, r.id, k.ord, k.po_line_id, k.item_id, k.qty, k.location_id, k.lot_no, k.expiry_date::date,
              NULLIF(string_to_array(k.serials, E'\\x1f'), '{}'), k.status_id
         FROM r, unnest($8::uuid[], $9::uuid[], $10::numeric[], $11::uuid[], $12::text[], $13::text[], $14::text[], $15::uuid[])
              WITH ORDINALITY AS k(po_line_id, item_id, qty, location_id, lot_no, expiry_date, serials, status_id, ord)`,
      [
        this.uow.tenantId, receiptId, receiptNo, id, txn?.id ?? null, dto.notes ?? null, this.uow.userId,
        rows.map((r) => r.poLine.id), rows.map((r) => r.poLine.item_id), rows.map((r) => sql(r.qty)), rows.map((r) => r.locationId),
        dto.lines.map((l) => l.lotNo ?? null), dto.lines.map((l) => l.expiryDate ?? null), dto.lines.map((l) => (l.serialNos ?? []).join('\x1f')),
        rows.map((r) => r.statusId),
      ],
    );
    await this.m.query(
      `UPDATE purchase_order_lines l SET qty_received = l.qty_received + k.qty, qty_received_base = l.qty_received_base + k.base
         FROM (SELECT po_line_id, sum(qty) AS qty, sum(base) AS base FROM unnest($3::uuid[], $4::numeric[], $5::numeric[]) AS k(po_line_id, qty, base) GROUP BY po_line_id) k
        WHERE l.tenant_id = $1 AND l.purchase_order_id = $2 AND l.id = k.po_line_id`,
      [this.uow.tenantId, id, rows.map((r) => r.poLine.id), rows.map((r) => sql(r.qty)), rows.map((r) => sql(r.base))],
    );
    const [{ complete }]: Array<{ complete: boolean }> = await this.m.query(
      `SELECT bool_and(qty_received >= qty_ordered) AS complete FROM purchase_order_lines WHERE tenant_id = $1 AND purchase_order_id = $2`,
      [this.uow.tenantId, id],
    );
    await this.store.touch(id, 'status = $4', [complete ? 'received' : 'partially_received']);
    return (await this.receipts(id, receiptId))[0];
  }

  /** The order's receipts, newest first (404 for an unknown order). */
  async listReceipts(id: string) {
    await this.store.find(id);
    const data = await this.receipts(id);
    return { data, count: data.length, limit: data.length, offset: 0 };
  }

  private async receipts(orderId: string, receiptId?: string): Promise<ReceiptView[]> {
    const rows: ReceiptRow[] = await this.m.query(
      `SELECT r.id, r.receipt_no, r.purchase_order_id, r.received_at, r.transaction_id, r.notes, r.created_by, r.created_at,
              (SELECT coalesce(json_agg(json_build_object('line_no', l.line_no, 'po_line_id', l.po_line_id, 'item_id', l.item_id, 'qty', l.qty,
                        'location_id', l.location_id, 'lot_no', l.lot_no, 'expiry_date', to_char(l.expiry_date, 'YYYY-MM-DD'),
                        'serial_nos', l.serial_nos, 'status_id', l.status_id) ORDER BY l.line_no), '[]')
                 FROM receipt_lines l WHERE l.tenant_id = r.tenant_id AND l.receipt_id = r.id) AS lines
         FROM receipts r
        WHERE r.tenant_id = $1 AND r.purchase_order_id = $2 AND ($3::uuid IS NULL OR r.id = $3)
        ORDER BY r.created_at DESC, r.id DESC`,
      [this.uow.tenantId, orderId, receiptId ?? null],
    );
    return rows.map(receiptView);
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

  private linesOf(ids: string[]): Promise<PoLineRow[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.m.query(
      `SELECT id, purchase_order_id, line_no, item_id, uom_id, qty_ordered, unit_price, qty_received, qty_ordered_base
         FROM purchase_order_lines WHERE tenant_id = $1 AND purchase_order_id = ANY($2::uuid[]) ORDER BY purchase_order_id, line_no`,
      [this.uow.tenantId, ids],
    );
  }
}

/** Σ qty × unitPrice, exactly. */
const total = (lines: NewPoLine[]) => sum(lines.map((l) => l.qtyOrdered.times(l.unitPrice)));

/** A known item of any kind (404 naming the field), active (409): new order lines. */
export function activeItem(items: Map<string, ItemRef>, id: string, field: string): ItemRef {
  const item = items.get(id);
  if (!item) throw unknownReference(field);
  if (!item.isActive) throw invalidState(`Item ${item.itemNo} is inactive`);
  return item;
}
