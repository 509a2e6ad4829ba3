import type { EntityManager } from 'typeorm';
import { query, raw, sql } from '../../database/sql';

/**
 * The ledger invariants of CONTRACT.md §5, checked by SQL across all tenants (run it as the schema
 * owner, which row-level security does not filter). Each check returns the rows that break it.
 * Used by `npm run ledger:verify` and by the concurrency tests.
 */
export interface InvariantCheck {
  name: string;
  description: string;
  sql: string;
}

/** A numeric zero with the quantities' scale, for sums that are empty on one side. */
const ZERO = '0::numeric(20,6)';

/**
 * Every check is written without joins between the two sides it compares (rows of each side, summed per
 * key at the top: UNION ALL and GROUP BY, not a FULL JOIN), so verifyLedger's tenant filter on the
 * grouping key reaches every scan: one tenant's check reads that tenant's rows, not the whole database.
 */
export const INVARIANT_CHECKS: InvariantCheck[] = [
  {
    name: 'balance_equals_ledger',
    description: "every balance's qtyOnHand equals the sum of its ledger lines",
    sql: `
      SELECT tenant_id, item_id, location_id, lot_id, status_id, sum(balance) AS balance, sum(ledger) AS ledger
        FROM (SELECT tenant_id, item_id, location_id, lot_id, status_id, qty_on_hand AS balance, ${ZERO} AS ledger FROM balances
              UNION ALL
              SELECT tenant_id, item_id, location_id, lot_id, status_id, ${ZERO}, qty_delta FROM ledger_lines) x
       GROUP BY tenant_id, item_id, location_id, lot_id, status_id
      HAVING sum(balance) <> sum(ledger)`,
  },
  {
    name: 'balance_not_negative',
    description: 'no balance is negative',
    sql: `SELECT tenant_id, id, item_id, location_id, qty_on_hand, qty_allocated FROM balances
           WHERE qty_on_hand < 0 OR qty_allocated < 0`,
  },
  {
    name: 'allocated_within_on_hand',
    description: 'per (item, location, lot, status): qtyAllocated <= qtyOnHand',
    sql: `SELECT tenant_id, id, item_id, location_id, qty_on_hand, qty_allocated FROM balances WHERE qty_allocated > qty_on_hand`,
  },
  {
    name: 'balance_allocated_equals_allocations',
    description: "a balance's qtyAllocated equals its active allocations",
    sql: `
      SELECT b.tenant_id, b.id, b.qty_allocated, coalesce(a.qty, 0) AS allocations
        FROM balances b
        LEFT JOIN (SELECT tenant_id, balance_id, sum(qty) AS qty FROM allocations WHERE status = 'active'
                    GROUP BY tenant_id, balance_id) a ON a.tenant_id = b.tenant_id AND a.balance_id = b.id
       WHERE b.qty_allocated <> coalesce(a.qty, 0)`,
  },
  {
    name: 'reservation_allocated_equals_allocations',
    description: "a reservation's qtyAllocated equals its active allocations",
    sql: `
      SELECT r.tenant_id, r.id, r.reservation_no, r.status, r.qty_allocated, coalesce(a.qty, 0) AS allocations
        FROM reservations r
        LEFT JOIN (SELECT tenant_id, reservation_id, sum(qty) AS qty FROM allocations WHERE status = 'active'
                    GROUP BY tenant_id, reservation_id) a ON a.tenant_id = r.tenant_id AND a.reservation_id = r.id
       WHERE r.qty_allocated <> coalesce(a.qty, 0) OR (r.status NOT IN ('open', 'allocated') AND r.qty_allocated <> 0)`,
  },
  {
    name: 'position_matches_balances_and_holds',
    description: 'per (item, facility): the position counters equal Available on hand, allocations and open unallocated reservations',
    sql: `
      SELECT tenant_id, item_id, facility_id,
             sum(p_on_hand) AS qty_available_on_hand, sum(on_hand) AS on_hand, sum(p_allocated) AS qty_allocated,
             sum(allocated) AS allocated, sum(p_reserved) AS qty_reserved, sum(reserved) AS reserved
        FROM (SELECT tenant_id, item_id, facility_id, qty_available_on_hand AS p_on_hand, qty_allocated AS p_allocated,
                     qty_reserved AS p_reserved, ${ZERO} AS on_hand, ${ZERO} AS allocated, ${ZERO} AS reserved
                FROM inventory_positions
              UNION ALL
              SELECT b.tenant_id, b.item_id, b.facility_id, 0, 0, 0, b.qty_on_hand, b.qty_allocated, 0
                FROM balances b JOIN stock_statuses s ON s.tenant_id = b.tenant_id AND s.id = b.status_id AND s.is_available
              UNION ALL
              SELECT tenant_id, item_id, facility_id, 0, 0, 0, 0, 0, qty - qty_allocated - qty_fulfilled
                FROM reservations WHERE status IN ('open', 'allocated')) x
       GROUP BY tenant_id, item_id, facility_id
      HAVING sum(p_on_hand) <> sum(on_hand) OR sum(p_allocated) <> sum(allocated) OR sum(p_reserved) <> sum(reserved)`,
  },
  {
    name: 'holds_within_available',
    description: 'per (item, facility): allocated + open unallocated reserved <= on hand in Available statuses',
    sql: `SELECT tenant_id, item_id, facility_id, qty_available_on_hand, qty_allocated, qty_reserved FROM inventory_positions
           WHERE qty_allocated + qty_reserved > qty_available_on_hand`,
  },
  {
    name: 'serials_match_balances',
    description: 'serial-tracked items: serials in stock per (item, location, lot, status) equal the balance',
    sql: `
      SELECT tenant_id, item_id, location_id, sum(qty) AS qty_on_hand, sum(n) AS serials_in_stock
        FROM (SELECT b.tenant_id, b.item_id, b.location_id, b.lot_id, b.status_id, b.qty_on_hand AS qty, 0 AS n
                FROM balances b JOIN items i ON i.tenant_id = b.tenant_id AND i.id = b.item_id
               WHERE i.serial_tracking = 'required'
              UNION ALL
              SELECT tenant_id, item_id, location_id, lot_id, status_id, 0, 1 FROM serials WHERE in_stock) x
       GROUP BY tenant_id, item_id, location_id, lot_id, status_id
      HAVING sum(qty) <> sum(n)`,
  },
  {
    name: 'transactions_match_tx_counter',
    description: "a tenant's TX number counter equals its number of ledger transactions (the unfiltered list's count)",
    sql: `
      SELECT tenant_id, sum(n) AS transactions, sum(counter) AS tx_counter
        FROM (SELECT tenant_id, 1 AS n, 0 AS counter FROM ledger_transactions
              UNION ALL
              SELECT tenant_id, 0, last_value FROM document_sequences WHERE prefix = 'TX') x
       GROUP BY tenant_id
      HAVING sum(n) <> sum(counter)`,
  },
  {
    name: 'moves_net_zero',
    description: "a move's lines sum to zero per item, facility and lot: it changes where and in which status stock is, never how much, which lot or which facility",
    sql: `
      SELECT t.tenant_id, t.id AS transaction_id, t.txn_no, l.item_id, l.facility_id, l.lot_id, sum(l.qty_delta) AS net
        FROM ledger_transactions t JOIN ledger_lines l ON l.tenant_id = t.tenant_id AND l.transaction_id = t.id
       WHERE t.type = 'move'
       GROUP BY t.tenant_id, t.id, t.txn_no, l.item_id, l.facility_id, l.lot_id
      HAVING sum(l.qty_delta) <> 0`,
  },
  {
    name: 'documents_match_postings',
    description: "what documents say they shipped, received and issued equals their ledger postings, per document and item (sales orders' shipments, purchase orders' receipts, work orders' components and output, transfer orders' shipments and receipts)",
    // One row per document line and per ledger line, summed per (tenant, document, item) at the top: no
    // join, so verifyLedger's tenant filter (`v.tenant_id = …`) reaches every scan below the aggregate.
    sql: `
      SELECT tenant_id, document_type, document_id, item_id, sum(doc) AS document_qty, sum(posted) AS posted_qty
        FROM (
          SELECT l.tenant_id, 'sales_order' AS document_type, l.sales_order_id AS document_id, l.item_id, l.qty_shipped_base AS doc, ${ZERO} AS posted
            FROM sales_order_lines l JOIN items i ON i.tenant_id = l.tenant_id AND i.id = l.item_id AND i.item_kind = 'stock'
          UNION ALL
          SELECT l.tenant_id, 'purchase_order', l.purchase_order_id, l.item_id, l.qty_received_base, ${ZERO}
            FROM purchase_order_lines l JOIN items i ON i.tenant_id = l.tenant_id AND i.id = l.item_id AND i.item_kind = 'stock'
          UNION ALL
          SELECT tenant_id, 'work_order', work_order_id, item_id, -qty_issued, ${ZERO} FROM work_order_components
          UNION ALL
          SELECT tenant_id, 'work_order', id, item_id, qty_completed, ${ZERO} FROM work_orders
          UNION ALL
          SELECT tenant_id, 'transfer_out', transfer_order_id, item_id, qty_shipped, ${ZERO} FROM transfer_order_lines
          UNION ALL
          SELECT tenant_id, 'transfer_in', transfer_order_id, item_id, qty_received, ${ZERO} FROM transfer_order_lines
          UNION ALL
          SELECT t.tenant_id, CASE t.type WHEN 'shipment' THEN 'sales_order' WHEN 'production' THEN 'work_order' ELSE t.type END, t.source_id, l.item_id,
                 ${ZERO}, CASE WHEN t.type IN ('shipment', 'transfer_out') THEN -l.qty_delta ELSE l.qty_delta END
            FROM ledger_transactions t JOIN ledger_lines l ON l.tenant_id = t.tenant_id AND l.transaction_id = t.id
           WHERE (t.type = 'shipment' AND t.source_type = 'sales_order') OR (t.type = 'production' AND t.source_type = 'work_order')
              OR (t.type IN ('transfer_out', 'transfer_in') AND t.source_type = 'transfer_order')
          UNION ALL
          SELECT t.tenant_id, 'purchase_order', r.purchase_order_id, l.item_id, ${ZERO}, l.qty_delta
            FROM ledger_transactions t JOIN ledger_lines l ON l.tenant_id = t.tenant_id AND l.transaction_id = t.id
            JOIN receipts r ON r.tenant_id = t.tenant_id AND r.id = t.source_id
           WHERE t.type = 'receipt' AND t.source_type = 'receipt') x
       GROUP BY tenant_id, document_type, document_id, item_id
      HAVING sum(doc) <> sum(posted)`,
  },
];

export interface Violation {
  check: string;
  description: string;
  rows: Record<string, unknown>[];
}

/** Runs a statement's text with its parameters (a driver's or an EntityManager's `query`). */
type Query = (text: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

/** Runs every check; `tenantId` limits them to one tenant. Returns only the checks that found rows. */
export async function verifyLedger(run: Query, tenantId?: string): Promise<Violation[]> {
  const violations: Violation[] = [];
  for (const check of INVARIANT_CHECKS) {
    const statement = tenantId ? sql`SELECT * FROM (${raw(check.sql)}) v WHERE v.tenant_id = ${tenantId}` : sql`${raw(check.sql)}`;
    const rows = await run(statement.text, statement.values);
    if (rows.length) violations.push({ check: check.name, description: check.description, rows });
  }
  return violations;
}

/**
 * `verifyLedger` in `m`'s transaction, made read-only first (`ledger:verify` against production must
 * never write). Open the transaction REPEATABLE READ: every check then sees the same snapshot.
 */
export async function verifyLedgerReadOnly(m: EntityManager, tenantId?: string): Promise<Violation[]> {
  await query(m, sql`SET TRANSACTION READ ONLY`);
  return verifyLedger((text, params) => m.query(text, params), tenantId);
}
