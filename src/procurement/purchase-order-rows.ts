/** A purchase order as stored (rows), as answered (view), and its states. */
import { auditView, DocumentRow, Transitions } from '../documents/document-store';
import { num } from '../documents/quantity';
import { PoStatus } from './procurement.dto';

export interface PoRow extends DocumentRow {
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

export interface PoLineRow {
  id: string;
  purchase_order_id: string;
  line_no: number;
  item_id: string;
  uom_id: string;
  qty_ordered: string;
  unit_price: string;
  qty_received: string;
  qty_ordered_base: string;
  qty_received_base: string;
}

export const PO_COLUMNS = `id, po_no, supplier_id, facility_id, status, currency, to_char(order_date, 'YYYY-MM-DD') AS order_date,
  to_char(expected_date, 'YYYY-MM-DD') AS expected_date, notes, total_amount, requisition_id, version, created_by, updated_by, created_at, updated_at`;

export const poView = (o: PoRow, lines: PoLineRow[]) => ({
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
