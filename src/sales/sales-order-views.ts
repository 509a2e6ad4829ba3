/** A sales order as answered (its record), and its states. */
import type { EntityMetadata } from 'typeorm';
import { recordOf } from '../database/records';
import { Transitions } from '../documents/document-store';
import { ReservationView } from '../inventory/ledger/views';
import { SalesOrder, SalesOrderLine } from './sales-order.entity';
import type { SalesOrderResponse } from './sales.responses';
import { SoStatus } from './sales.dto';

/** Line columns that stay inside the service (base-unit quantities, the parent key). */
const INTERNAL_LINE_COLUMNS = ['salesOrderId', 'qtyBase', 'qtyShippedBase'];

/**
 * The answer for an order and its lines: every column of the entities (recordOf), so a column added to
 * the table and the entity is answered without a mapping here (docs/extending.md).
 */
export const soView = (meta: { order: EntityMetadata; line: EntityMetadata }, o: SalesOrder, lines: SalesOrderLine[]): SalesOrderResponse =>
  ({
    ...recordOf(meta.order, o),
    lines: lines.map((l) => recordOf(meta.line, l, INTERNAL_LINE_COLUMNS)),
  }) as unknown as SalesOrderResponse;

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
