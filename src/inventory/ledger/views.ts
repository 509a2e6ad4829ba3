import { auditView } from '../../documents/document-store';
import { num } from '../../documents/quantity';

export interface TransactionRow {
  id: string;
  txn_no: string;
  type: string;
  posted_at: Date;
  posted_by: string;
  reason: string | null;
  source_type: string | null;
  source_id: string | null;
}

export interface LineRow {
  transaction_id: string;
  line_no: number;
  item_id: string;
  location_id: string;
  lot_id: string | null;
  lot_no: string | null;
  status_id: string;
  qty_delta: string;
  serial_nos: string[] | null;
}

export const transactionView = (t: TransactionRow, lines: LineRow[]) => ({
  id: t.id,
  txnNo: t.txn_no,
  type: t.type,
  postedAt: t.posted_at,
  postedBy: t.posted_by,
  reason: t.reason,
  sourceType: t.source_type,
  sourceId: t.source_id,
  lines: lines.map((l) => ({
    lineNo: l.line_no,
    itemId: l.item_id,
    locationId: l.location_id,
    lotId: l.lot_id,
    lotNo: l.lot_no,
    statusId: l.status_id,
    qtyDelta: num(l.qty_delta),
    serialNos: l.serial_nos ?? [],
  })),
});
export type TransactionView = ReturnType<typeof transactionView>;

export interface ReservationRow {
  id: string;
  reservation_no: string;
  item_id: string;
  facility_id: string;
  qty: string;
  qty_allocated: string;
  qty_fulfilled: string;
  status: string;
  demand_type: string;
  demand_id: string | null;
  demand_line_id: string | null;
  expires_at: Date | null;
  notes: string | null;
  version: number;
  created_by: string;
  updated_by: string;
  created_at: Date;
  updated_at: Date;
}

/** A reservation row's columns (ReservationRow). */
export const RESERVATION_COLUMNS = `r.id, r.reservation_no, r.item_id, r.facility_id, r.qty, r.qty_allocated, r.qty_fulfilled, r.status, r.demand_type,
  r.demand_id, r.demand_line_id, r.expires_at, r.notes, r.version, r.created_by, r.updated_by, r.created_at, r.updated_at`;

export interface AllocationRow {
  id: string;
  reservation_id: string;
  balance_id: string;
  item_id: string;
  location_id: string;
  lot_id: string | null;
  qty: string;
  qty_issued: string;
  status: string;
}

/** An allocation row's columns (AllocationRow). */
export const ALLOCATION_COLUMNS = `a.id, a.reservation_id, a.balance_id, a.item_id, a.location_id, a.lot_id, a.qty, a.qty_issued, a.status`;

export const allocationView = (a: AllocationRow) => ({
  id: a.id,
  reservationId: a.reservation_id,
  itemId: a.item_id,
  locationId: a.location_id,
  lotId: a.lot_id,
  qty: num(a.qty),
});

export const reservationView = (r: ReservationRow, allocations: AllocationRow[]) => ({
  id: r.id,
  reservationNo: r.reservation_no,
  itemId: r.item_id,
  facilityId: r.facility_id,
  qty: num(r.qty),
  qtyAllocated: num(r.qty_allocated),
  qtyFulfilled: num(r.qty_fulfilled),
  status: r.status,
  demandType: r.demand_type,
  demandId: r.demand_id,
  demandLineId: r.demand_line_id,
  expiresAt: r.expires_at,
  notes: r.notes,
  allocations: allocations.filter((a) => a.status === 'active').map(allocationView),
  ...auditView(r),
});
export type ReservationView = ReturnType<typeof reservationView>;
