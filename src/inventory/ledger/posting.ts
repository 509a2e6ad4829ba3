import type Decimal from 'decimal.js';

export const TRANSACTION_TYPES = [
  'adjustment', 'receipt', 'shipment', 'transfer_out', 'transfer_in', 'count', 'production', 'fulfillment',
] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

/**
 * One line of a posting, in base units. Procurement, sales, production, transfers and counts build
 * these from their documents; the LedgerService validates them against the item's tracking rules.
 */
export interface PostingLine {
  itemId: string;
  locationId: string;
  /** Stock status; default AVAILABLE. */
  statusId?: string;
  /** Signed quantity in the item's base unit. */
  qty: Decimal.Value;
  /** An existing lot of the item … */
  lotId?: string | null;
  /** … or a lot number: created on an inbound posting when new. */
  lotNo?: string | null;
  /** Expiry of a new lot (required for expiry-tracked items). */
  expiryDate?: string | null;
  /** Serial-tracked items: one serial per unit. */
  serialNos?: string[];
  /** Outbound serial-tracked lines without serialNos pick in-stock serials at the location (by serial number). */
  pickSerials?: boolean;
  /** Part of a negative quantity that consumes allocated stock (issued from a hard allocation): ≤ 0. */
  allocatedDelta?: Decimal.Value;
  /** Where validation errors point, e.g. `lines[2]` (default: the fields at top level). */
  field?: string;
  /** The request's name for `qty` in errors (default `qty`). */
  qtyField?: string;
}

export interface Posting {
  type: TransactionType;
  reason?: string | null;
  sourceType?: string | null;
  sourceId?: string | null;
  lines: PostingLine[];
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

/** A hard allocation request: pin `qty` of a reservation to a location (and lot). */
export interface Pin {
  locationId: string;
  lotId?: string | null;
  qty: Decimal.Value;
}
