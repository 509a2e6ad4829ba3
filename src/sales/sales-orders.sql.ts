/**
 * The sales order statements that work on all of an order's lines at once (an order may have 1,000
 * lines: one statement each, whatever the count, where the repository would write one row per value list).
 */
import type { EntityManager } from 'typeorm';
import { query, sql } from '../database/sql';
import { sql as numeric } from '../documents/quantity';
import type { Qty } from '../documents/quantity';

export interface NewSoLine {
  itemId: string;
  uomId: string;
  qty: Qty;
  qtyBase: Qty;
  unitPrice: Qty;
}

/** Inserts `lines` as the order's lines 1..n, in the given order. */
export function insertLines(m: EntityManager, tenantId: string, orderId: string, lines: NewSoLine[]): Promise<unknown> {
  return query(
    m,
    sql`INSERT INTO sales_order_lines (tenant_id, id, sales_order_id, line_no, item_id, uom_id, qty, unit_price, qty_base)
        SELECT ${tenantId}, gen_random_uuid(), ${orderId}, k.ord, k.item_id, k.uom_id, k.qty, k.price, k.base
          FROM unnest(${lines.map((l) => l.itemId)}::uuid[], ${lines.map((l) => l.uomId)}::uuid[], ${lines.map((l) => numeric(l.qty))}::numeric[],
                      ${lines.map((l) => numeric(l.unitPrice))}::numeric[], ${lines.map((l) => numeric(l.qtyBase))}::numeric[])
               WITH ORDINALITY AS k(item_id, uom_id, qty, price, base, ord)`,
  );
}

/** Records each stock line's hold (line id → reservation id). */
export function setReservations(m: EntityManager, tenantId: string, orderId: string, lineIds: string[], reservationIds: string[]): Promise<unknown> {
  return query(
    m,
    sql`UPDATE sales_order_lines l SET reservation_id = k.reservation_id FROM unnest(${lineIds}::uuid[], ${reservationIds}::uuid[]) AS k(id, reservation_id)
         WHERE l.tenant_id = ${tenantId} AND l.sales_order_id = ${orderId} AND l.id = k.id`,
  );
}

/** Adds what shipped to the lines (a line may appear several times: its parts are summed). */
export function addShipped(m: EntityManager, tenantId: string, orderId: string, shipped: Array<{ lineId: string; qty: Qty; base: Qty }>): Promise<unknown> {
  return query(
    m,
    sql`UPDATE sales_order_lines l SET qty_shipped = l.qty_shipped + k.qty, qty_shipped_base = l.qty_shipped_base + k.base
          FROM (SELECT id, sum(qty) AS qty, sum(base) AS base
                  FROM unnest(${shipped.map((s) => s.lineId)}::uuid[], ${shipped.map((s) => numeric(s.qty))}::numeric[], ${shipped.map((s) => numeric(s.base))}::numeric[]) AS k(id, qty, base)
                 GROUP BY id) k
         WHERE l.tenant_id = ${tenantId} AND l.sales_order_id = ${orderId} AND l.id = k.id`,
  );
}
