import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { AppError, ErrorDetail, invalidField, unknownReference } from '../common/errors';
import { UnitOfWork } from '../database/unit-of-work';
import { DocumentNumbers } from '../documents/numbering.sql';
import { num, qty as toQty, sql } from '../documents/quantity';
import { CatalogRefs } from '../documents/references.sql';
import { UomConversion } from '../documents/uom-conversion.sql';
import { LedgerService } from '../inventory/ledger/ledger.service';
import { PostingLine } from '../inventory/ledger/posting';
import { CreateReceiptDto } from './procurement.dto';
import { PoLineRow } from './purchase-order-rows';
import { PurchaseOrdersService } from './purchase-orders.service';

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

/** Goods receipts of purchase orders: stock in through one ledger posting per receipt. */
@Injectable()
export class GoodsReceiptsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly uoms: UomConversion,
    private readonly numbers: DocumentNumbers,
    private readonly ledger: LedgerService,
    private readonly orders: PurchaseOrdersService,
  ) {}

  private get m() {
    return this.uow.manager;
  }

  /**
   * A goods receipt: one `receipt` ledger transaction (source: the receipt) for its stock lines, in base
   * units, and the order lines' qtyReceived, in one unit of work. The order row is locked first, so two
   * receipts of one order queue and the second sees what the first received (409 over_receipt beyond the
   * open quantity; the lines' CHECK is the database's last word).
   */
  async receive(id: string, dto: CreateReceiptDto, ifMatch?: number): Promise<ReceiptView> {
    const o = await this.orders.store.lockFor('receive', id, ifMatch);
    const poLines = new Map((await this.orders.lines([id])).map((l) => [l.id, l]));
    const items = await this.refs.items([...poLines.values()].map((l) => l.item_id));
    const locations = await this.refs.locations(dto.lines.map((l) => l.locationId).filter((x): x is string => !!x));
    const statuses = await this.refs.statuses();
    const receiving = new Map<string, { qty: Decimal; base: Decimal }>();
    const postings: PostingLine[] = [];
    const rows: Array<{ poLine: PoLineRow; qty: Decimal; base: Decimal; locationId: string | null; statusId: string | null }> = [];
    for (const [i, line] of dto.lines.entries()) {
      const f = `lines[${i}]`;
      const poLine = poLines.get(line.poLineId);
      if (!poLine) throw unknownReference(`${f}.poLineId`);
      const item = items.get(poLine.item_id)!;
      const qty = toQty(line.qty);
      const converted = await this.uoms.toBase(item, poLine.uom_id, line.qty, `${f}.qty`);
      // In base units a receipt never adds up to more than the line ordered: a partial one posts its
      // quantity converted (rounded up) but at most what is left, and the one that completes the line
      // posts exactly its rest (as a shipment completing a sales line does). Beyond the open quantity is
      // refused below (over_receipt).
      const before = receiving.get(poLine.id) ?? { qty: toQty(0), base: toQty(0) };
      const baseLeft = Decimal.max(toQty(poLine.qty_ordered_base).minus(poLine.qty_received_base).minus(before.base), 0);
      const base = before.qty.plus(qty).eq(toQty(poLine.qty_ordered).minus(poLine.qty_received)) ? baseLeft : Decimal.min(converted, baseLeft);
      receiving.set(poLine.id, { qty: before.qty.plus(qty), base: before.base.plus(base) });
      if (item.kind === 'stock') {
        if (!line.locationId) throw invalidField(`${f}.locationId`, 'is required for a stock item');
        // Receiving finishes an approved order: an item or location deactivated since is not refused.
        this.refs.location(locations, line.locationId, `${f}.locationId`, 'committed', o.facility_id);
        const status = this.refs.status(statuses, line.statusId, `${f}.statusId`);
        // A partial receipt whose rounded-up base quantities already cover the line's rest posts nothing more.
        if (base.gt(0)) postings.push({
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
    for (const [poLineId, { qty }] of receiving) {
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
    await this.orders.store.touch(id, 'status = $4', [complete ? 'received' : 'partially_received']);
    return (await this.receipts(id, receiptId))[0];
  }

  /** The order's receipts, newest first (404 for an unknown order). */
  async listReceipts(id: string) {
    await this.orders.store.find(id);
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
}
