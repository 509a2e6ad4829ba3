import type Decimal from 'decimal.js';
import type { Use } from '../../documents/references.sql';

export const TRANSACTION_TYPES = [
  'adjustment', 'receipt', 'shipment', 'transfer_out', 'transfer_in', 'count', 'production', 'fulfillment', 'move',
] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

/**
 * A free line of a posting, in base units: stock moves in or out of a balance without touching any
 * hold. Documents build these; the ledger checks them against the item's tracking rules.
 */
export interface PostingLine {
  itemId: string;
  locationId: string;
  /** Stock status; default AVAILABLE. */
  statusId?: string | null;
  /** Signed quantity in the item's base unit. */
  qty: Decimal.Value;
  /** An existing lot of the item … */
  lotId?: string | null;
  /** … or a lot number: created on an inbound posting when new. */
  lotNo?: string | null;
  /** Expiry of a new lot (required for expiry-tracked items). */
  expiryDate?: string | null;
  /** Serial-tracked items: one serial per unit. */
  serialNos?: string[] | null;
  /** Outbound serial-tracked lines without serialNos pick in-stock serials at the location (by serial number). */
  pickSerials?: boolean;
  /** Where validation errors point, e.g. `lines[2]` (default: the fields at top level). */
  field?: string;
  /** The request's name for `qty` in errors (default `qty`). */
  qtyField?: string;
  /**
   * How this line uses its item, location and facility when it differs from the posting's (`startsWork`):
   * a move's outbound line is `committed` (an inactive source location may be emptied) while its inbound
   * line starts new work there.
   */
  use?: Use;
}

/**
 * A line that consumes a hold: issues `qty` (default: all it has allocated) of a reservation's
 * allocated stock — from its allocations at `locationId` / `lotId` when given, earliest expiry first —
 * as outbound ledger lines, and counts it as fulfilled on the reservation.
 */
export interface IssueLine {
  reservationId: string;
  qty?: Decimal.Value;
  locationId?: string | null;
  lotId?: string | null;
  /** Serial-tracked items: the serials issued (default: picked at the allocations' locations). */
  serialNos?: string[] | null;
  field?: string;
  qtyField?: string;
}

export const isIssue = (line: PostingLine | IssueLine): line is IssueLine => 'reservationId' in line;

/** One ledger transaction: free lines and hold-consuming lines, posted all or nothing. */
export interface Posting {
  type: TransactionType;
  reason?: string | null;
  sourceType?: string | null;
  sourceId?: string | null;
  lines: Array<PostingLine | IssueLine>;
  /**
   * The posting starts new work (an adjustment): inactive items, locations and facilities are refused
   * (409). Postings that finish a committed document (receiving a shipped transfer, completing a count,
   * shipping reserved stock) leave this unset.
   */
  startsWork?: boolean;
}

/** A stock adjustment (POST /v1/inventory/adjustments): one line of new work, posted on its own. */
export interface Adjustment {
  itemId: string;
  locationId: string;
  statusId?: string;
  /** + in, − out (validation errors point at `qtyDelta`). */
  qtyDelta: number | string;
  reason: string;
  lotNo?: string;
  expiryDate?: string;
  serialNos?: string[];
}

/** A soft hold of stock at (item, facility) against a demand document. */
export interface Hold {
  itemId: string;
  facilityId: string;
  qty: Decimal.Value;
  demandType?: 'sales_order' | 'work_order' | 'transfer_order' | 'manual';
  demandId?: string | null;
  demandLineId?: string | null;
  expiresAt?: Date | null;
  notes?: string | null;
  /** Where validation errors point (default top level). */
  field?: string;
}

/**
 * How a posting or hold ends its unit of work — the ledger's own business, never a caller's: `last` when
 * nothing follows it (a request that is one adjustment or one reservation: LedgerService.adjust and
 * LedgerService.reserve), so its last statement carries the COMMIT (UnitOfWork.commitWith).
 */
export interface Ending {
  last: boolean;
}

/** A hard allocation request: pin `qty` of a reservation to a location (and lot). */
export interface Pin {
  locationId: string;
  lotId?: string | null;
  qty: Decimal.Value;
}
