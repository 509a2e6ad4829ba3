/** A purchase order as answered (view, from its entities) and its states. */
import { documentAudit } from '../common/entity';
import { Transitions } from '../documents/document-store';
import { num } from '../documents/quantity';
import { PoStatus } from './procurement.dto';
import { PurchaseOrder, PurchaseOrderLine } from './purchase-order.entity';

export const poView = (o: PurchaseOrder, lines: PurchaseOrderLine[]) => ({
  id: o.id,
  poNo: o.poNo,
  supplierId: o.supplierId,
  facilityId: o.facilityId,
  status: o.status as PoStatus,
  currency: o.currency,
  orderDate: o.orderDate,
  expectedDate: o.expectedDate,
  notes: o.notes,
  lines: lines.map((l) => ({
    id: l.id,
    lineNo: l.lineNo,
    itemId: l.itemId,
    qtyOrdered: num(l.qtyOrdered),
    uomId: l.uomId,
    unitPrice: num(l.unitPrice),
    qtyReceived: num(l.qtyReceived),
  })),
  totalAmount: num(o.totalAmount),
  requisitionId: o.requisitionId,
  ...documentAudit(o),
});
export type PurchaseOrderView = ReturnType<typeof poView>;


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
