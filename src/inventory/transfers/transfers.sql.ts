import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { sql as numeric } from '../../documents/quantity';
import { query, sql } from '../../database/sql';

/**
 * The set-based statements of transfer orders over all of a transfer's lines (one statement whatever the
 * number of lines); the rest of the module goes through the entities' repositories.
 */

/** A checked line, quantity in base units. */
export interface NewTransferLine {
  itemId: string;
  qty: Decimal;
  fromLocationId: string;
  toLocationId: string;
  lotId: string | null;
  serialNos: string[];
}

/** Inserts the lines of `transferId`, numbered 1..n in the given order (no serials stored as NULL). */
export async function insertTransferLines(m: EntityManager, tenantId: string, transferId: string, lines: NewTransferLine[]): Promise<void> {
  await query(
    m,
    sql`INSERT INTO transfer_order_lines (tenant_id, id, transfer_order_id, line_no, item_id, qty, from_location_id, to_location_id, lot_id, serial_nos)
        SELECT ${tenantId}, k.id, ${transferId}, k.ord, k.item_id, k.qty, k.from_id, k.to_id, k.lot_id, NULLIF(string_to_array(k.serials, E'\\x1f'), '{}')
          FROM unnest(${lines.map(() => randomUUID())}::uuid[], ${lines.map((l) => l.itemId)}::uuid[], ${lines.map((l) => numeric(l.qty))}::numeric[],
                      ${lines.map((l) => l.fromLocationId)}::uuid[], ${lines.map((l) => l.toLocationId)}::uuid[], ${lines.map((l) => l.lotId)}::uuid[],
                      ${lines.map((l) => l.serialNos.join('\x1f'))}::text[])
               WITH ORDINALITY AS k(id, item_id, qty, from_id, to_id, lot_id, serials, ord)`,
  );
}

/**
 * Records what shipped on every line of `transferId`: its quantity, and the serials of the ledger line
 * of the same number in `transactionId` (posting line i is ledger line i + 1, as transfer line i is
 * line_no i + 1), including the serials picked, so receiving puts the same serials in stock.
 */
export async function recordShipped(m: EntityManager, tenantId: string, transferId: string, transactionId: string): Promise<void> {
  await query(
    m,
    sql`UPDATE transfer_order_lines t SET qty_shipped = t.qty, serial_nos = l.serial_nos
          FROM ledger_lines l
         WHERE t.tenant_id = ${tenantId} AND t.transfer_order_id = ${transferId}
           AND l.tenant_id = ${tenantId} AND l.transaction_id = ${transactionId} AND l.line_no = t.line_no`,
  );
}
