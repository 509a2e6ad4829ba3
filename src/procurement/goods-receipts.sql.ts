import type { EntityManager } from 'typeorm';
import { GENERIC, query, sql } from '../database/sql';
import { nextNumberSql } from '../documents/numbering.sql';

/** A line of a new receipt, as written (quantities as numeric text; serial numbers joined by U+001F). */
export interface NewReceiptLine {
  poLineId: string;
  itemId: string;
  qty: string;
  locationId: string | null;
  lotNo: string | null;
  expiryDate: string | null;
  /** The line's serial numbers joined by U+001F ('' for none). */
  serials: string;
  statusId: string | null;
}

/**
 * A receipt and its lines (numbered 1..n in the order given) in one statement that also takes its `GR`
 * number: a receipt may carry many lines, each with many serial numbers. The tenant's `GR` counter row is
 * locked from here to COMMIT, so this is the receipt's last statement. Returns what the database decides.
 * Prepared with its generic plan (every scan a key look-up), as the adjustments' statements are.
 */
export async function insertReceipt(
  m: EntityManager,
  r: { tenantId: string; id: string; orderId: string; transactionId: string | null; notes: string | null; createdBy: string; lines: NewReceiptLine[] },
): Promise<{ receiptNo: string; receivedAt: Date; createdAt: Date }> {
  const { lines } = r;
  const [row] = await query<Array<{ receipt_no: string; received_at: Date; created_at: Date }>>(
    m,
    sql`WITH n AS (${nextNumberSql(r.tenantId, 'GR')}),
       r AS (
         INSERT INTO receipts (tenant_id, id, receipt_no, purchase_order_id, transaction_id, notes, created_by)
         SELECT ${r.tenantId}, ${r.id}, n.no, ${r.orderId}, ${r.transactionId}, ${r.notes}, ${r.createdBy} FROM n
         RETURNING tenant_id, id, receipt_no, received_at, created_at),
       l AS (
         INSERT INTO receipt_lines (tenant_id, receipt_id, line_no, po_line_id, item_id, qty, location_id, lot_no, expiry_date, serial_nos, status_id)
         SELECT r.tenant_id, r.id, k.ord, k.po_line_id, k.item_id, k.qty, k.location_id, k.lot_no, k.expiry_date::date,
                NULLIF(string_to_array(k.serials, E'\\x1f'), '{}'), k.status_id
           FROM r, unnest(${lines.map((l) => l.poLineId)}::uuid[], ${lines.map((l) => l.itemId)}::uuid[], ${lines.map((l) => l.qty)}::numeric[],
                          ${lines.map((l) => l.locationId)}::uuid[], ${lines.map((l) => l.lotNo)}::text[], ${lines.map((l) => l.expiryDate)}::text[],
                          ${lines.map((l) => l.serials)}::text[], ${lines.map((l) => l.statusId)}::uuid[])
                WITH ORDINALITY AS k(po_line_id, item_id, qty, location_id, lot_no, expiry_date, serials, status_id, ord))
       SELECT receipt_no, received_at, created_at FROM r`,
    GENERIC,
  );
  return { receiptNo: row.receipt_no, receivedAt: row.received_at, createdAt: row.created_at };
}

/** Adds received quantities (in the line's UOM and in base units) to the order's lines, in one statement (generic plan: the lines by key). */
export async function addReceived(
  m: EntityManager,
  tenantId: string,
  orderId: string,
  received: Array<{ poLineId: string; qty: string; base: string }>,
): Promise<void> {
  await query(
    m,
    sql`UPDATE purchase_order_lines l SET qty_received = l.qty_received + k.qty, qty_received_base = l.qty_received_base + k.base
          FROM (SELECT po_line_id, sum(qty) AS qty, sum(base) AS base
                  FROM unnest(${received.map((r) => r.poLineId)}::uuid[], ${received.map((r) => r.qty)}::numeric[], ${received.map((r) => r.base)}::numeric[])
                       AS k(po_line_id, qty, base)
                 GROUP BY po_line_id) k
         WHERE l.tenant_id = ${tenantId} AND l.purchase_order_id = ${orderId} AND l.id = k.po_line_id`,
    GENERIC,
  );
}
