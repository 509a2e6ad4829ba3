import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { AppError, ErrorDetail, invalidField, unknownReference } from '../common/errors';
import { UnitOfWork } from '../database/unit-of-work';
import { num, sql as numeric, qty as toQty } from '../documents/quantity';
import { given } from '../documents/fields';
import { CatalogRefs } from '../documents/references.sql';
import { UomConversion } from '../documents/uom-conversion.sql';
import { LedgerService } from '../inventory/ledger/ledger.service';
import { PostingLine } from '../inventory/ledger/posting';
import { CreateReceiptDto } from './procurement.dto';
import { addReceived, insertReceipt } from './goods-receipts.sql';
import { PurchaseOrderLine } from './purchase-order.entity';
import { PurchaseOrdersService } from './purchase-orders.service';
import { Receipt, ReceiptLine } from './receipt.entity';

/** A receipt as read back, or as just written: the fields the answer shows. */
type ReceiptFields = Omit<Receipt, 'tenantId' | 'lines'> & { lines?: Array<Omit<ReceiptLine, 'tenantId' | 'receiptId' | 'receipt'>> };

const receiptView = (r: ReceiptFields) => ({
  id: r.id,
  receiptNo: r.receiptNo,
  purchaseOrderId: r.purchaseOrderId,
  receivedAt: r.receivedAt,
  transactionId: r.transactionId,
  notes: r.notes,
  lines: (r.lines ?? []).map((l) => ({
    lineNo: l.lineNo,
    poLineId: l.poLineId,
    itemId: l.itemId,
    qty: num(l.qty),
    locationId: l.locationId,
    lotNo: l.lotNo,
    expiryDate: l.expiryDate,
    serialNos: l.serialNos ?? [],
    statusId: l.statusId,
  })),
  createdBy: r.createdBy,
  createdAt: r.createdAt,
});
export type ReceiptView = ReturnType<typeof receiptView>;

/** Goods receipts of purchase orders: stock in through one ledger posting per receipt. */
@Injectable()
export class GoodsReceiptsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly uoms: UomConversion,
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
    const items = await this.refs.items([...poLines.values()].map((l) => l.itemId));
    const locations = await this.refs.locations(dto.lines.map((l) => l.locationId).filter((x): x is string => !!x));
    const statuses = await this.refs.statuses();
    const receiving = new Map<string, { qty: Decimal; base: Decimal }>();
    const postings: PostingLine[] = [];
    const rows: Array<{ poLine: PurchaseOrderLine; qty: Decimal; base: Decimal; locationId: string | null; statusId: string | null }> = [];
    for (const [i, line] of dto.lines.entries()) {
      const f = `lines[${i}]`;
      const poLine = poLines.get(line.poLineId);
      if (!poLine) throw unknownReference(`${f}.poLineId`);
      if (given(line.itemId) && line.itemId !== poLine.itemId) throw invalidField(`${f}.itemId`, "is not the order line's item");
      const item = items.get(poLine.itemId)!;
      const qty = toQty(line.qty);
      // In the line's unit at the line's own ratio: an approved order is received as it was committed,
      // whatever has become of the item's conversions since.
      const converted = await this.uoms.toBaseOfLine(item, { uomId: poLine.uomId, qty: poLine.qtyOrdered, qtyBase: poLine.qtyOrderedBase }, line.qty, `${f}.qty`);
      // In base units a receipt never adds up to more than the line ordered: a partial one posts its
      // quantity converted (rounded up) but at most what is left, and the one that completes the line
      // posts exactly its rest (as a shipment completing a sales line does). Beyond the open quantity is
      // refused below (over_receipt).
      const before = receiving.get(poLine.id) ?? { qty: toQty(0), base: toQty(0) };
      const baseLeft = Decimal.max(toQty(poLine.qtyOrderedBase).minus(poLine.qtyReceivedBase).minus(before.base), 0);
      const base = before.qty.plus(qty).eq(toQty(poLine.qtyOrdered).minus(poLine.qtyReceived)) ? baseLeft : Decimal.min(converted, baseLeft);
      receiving.set(poLine.id, { qty: before.qty.plus(qty), base: before.base.plus(base) });
      if (item.kind === 'stock') {
        if (!line.locationId) throw invalidField(`${f}.locationId`, 'is required for a stock item');
        // Receiving finishes an approved order: an item or location deactivated since is not refused.
        this.refs.location(locations, line.locationId, `${f}.locationId`, 'committed', o.facilityId);
        const status = this.refs.status(statuses, line.statusId, `${f}.statusId`);
        // A partial receipt whose rounded-up base quantities already cover the line's rest posts nothing more.
        if (base.gt(0)) postings.push({
          itemId: item.id, locationId: line.locationId, statusId: status.id, qty: base,
          lotNo: line.lotNo ?? null, expiryDate: line.expiryDate ?? null, serialNos: line.serialNos ?? null, field: f,
        });
      } else {
        for (const k of ['locationId', 'statusId', 'lotNo', 'expiryDate', 'serialNos'] as const)
          if (given(line[k])) throw invalidField(`${f}.${k}`, `must not be given: ${item.itemNo} is a ${item.kind} item and carries no stock`);
      }
      const statusId = item.kind === 'stock' ? this.refs.status(statuses, line.statusId, `${f}.statusId`).id : null;
      rows.push({ poLine, qty, base, locationId: line.locationId ?? null, statusId });
    }
    const over: ErrorDetail[] = [];
    for (const [poLineId, { qty }] of receiving) {
      const l = poLines.get(poLineId)!;
      const open = toQty(l.qtyOrdered).minus(l.qtyReceived);
      if (qty.gt(open)) over.push({ field: 'lines', poLineId, lineNo: l.lineNo, itemId: l.itemId, requested: qty.toNumber(), open: open.toNumber(), message: 'exceeds the open quantity' });
    }
    if (over.length) {
      throw new AppError(409, 'over_receipt', `Receipt exceeds the open quantity of purchase order ${o.poNo} line ${over[0].lineNo}: requested ${over[0].requested}, open ${over[0].open}`, over);
    }

    // The order is locked, so the lines read above plus what this receipt adds are the lines as they stand.
    const complete = [...poLines.values()].every((l) => toQty(l.qtyReceived).plus(receiving.get(l.id)?.qty ?? 0).gte(l.qtyOrdered));
    await addReceived(this.m, this.uow.tenantId, id, rows.map((r) => ({ poLineId: r.poLine.id, qty: numeric(r.qty), base: numeric(r.base) })));
    await this.orders.store.touch(id, { status: complete ? 'received' : 'partially_received' });
    // The tenant's numbers last: its TX and GR counter rows stay locked from here to COMMIT, so nothing of
    // the order's own rows comes after them.
    const receiptId = randomUUID();
    const txn = postings.length
      ? await this.ledger.post({ type: 'receipt', sourceType: 'receipt', sourceId: receiptId, lines: postings })
      : undefined;
    const receipt = {
      tenantId: this.uow.tenantId, id: receiptId, orderId: id, transactionId: txn?.id ?? null, notes: dto.notes ?? null, createdBy: this.uow.userId,
      lines: rows.map((r, i) => {
        const l = dto.lines[i];
        return {
          poLineId: r.poLine.id, itemId: r.poLine.itemId, qty: numeric(r.qty), locationId: r.locationId,
          lotNo: l.lotNo ?? null, expiryDate: l.expiryDate ?? null, serials: (l.serialNos ?? []).join('\x1f'), statusId: r.statusId,
        };
      }),
    };
    const { receiptNo, receivedAt, createdAt } = await insertReceipt(this.m, receipt);
    // The answer is what was written, shown as GET …/receipts shows the rows.
    return receiptView({
      id: receiptId, receiptNo, purchaseOrderId: id, receivedAt, transactionId: receipt.transactionId, notes: receipt.notes, createdBy: receipt.createdBy, createdAt,
      lines: receipt.lines.map((l, i) => ({ ...l, lineNo: i + 1, serialNos: dto.lines[i].serialNos ?? null })),
    });
  }

  /** The order's receipts, newest first (404 for an unknown order): all of them, one page without a next one. */
  async listReceipts(id: string) {
    await this.orders.store.find(id);
    const data = await this.receipts(id);
    return { data, count: data.length, limit: data.length, offset: 0, nextCursor: null };
  }

  /** The order's receipts (or the one `receiptId`) with their lines, in one statement. */
  private async receipts(orderId: string, receiptId?: string): Promise<ReceiptView[]> {
    const qb = this.uow
      .repository(Receipt)
      .createQueryBuilder('r')
      .leftJoinAndSelect('r.lines', 'l')
      .where('r.purchaseOrderId = :orderId', { orderId })
      .orderBy('r.createdAt', 'DESC')
      .addOrderBy('r.id', 'DESC')
      .addOrderBy('l.lineNo', 'ASC');
    if (receiptId) qb.where('r.id = :receiptId', { receiptId });
    return (await qb.getMany()).map(receiptView);
  }
}
