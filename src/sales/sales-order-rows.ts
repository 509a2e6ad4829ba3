/** A sales order as stored (rows), as answered (view), and its states. */
import { auditView, DocumentRow, Transitions } from '../documents/document-store';
import { num } from '../documents/quantity';
import { ReservationView } from '../inventory/ledger/views';
import { SoStatus } from './sales.dto';

export interface SoRow extends DocumentRow {
  order_no: string;
  customer_id: string;
  facility_id: string;
  requested_date: string | null;
  notes: string | null;
  total_amount: string;
}

export interface SoLineRow {
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

export const SO_COLUMNS = `id, order_no, customer_id, facility_id, status, to_char(requested_date, 'YYYY-MM-DD') AS requested_date, notes, total_amount,
  version, created_by, updated_by, created_at, updated_at`;

export const soView = (o: SoRow, lines: SoLineRow[]) => ({
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
export const HOLDING = ['open', 'allocated'];

/** Holds in the lock order of their positions (item; one facility per order), then by id. */
export const byPosition = (a: ReservationView, b: ReservationView) => (a.itemId < b.itemId ? -1 : a.itemId > b.itemId ? 1 : a.id < b.id ? -1 : 1);
