import { query, sql } from '../database/sql';
import type { UnitOfWork } from '../database/unit-of-work';

/**
 * The work-order statements over many component lines at once (one statement each, whatever the number
 * of lines), and the unit facts of a BOM explosion.
 */

/** A component item's unit: its base unit's decimals, and the factor of `uomId` to base (null: no conversion any more). */
export interface ComponentUnit {
  item_id: string;
  uom_id: string;
  decimals: number;
  factor: string | null;
}

/** For each (item, unit) pair: the item's base-unit decimals and the unit's factor to base (1 for the base unit itself). */
export function componentUnits(uow: UnitOfWork, pairs: Array<{ itemId: string; uomId: string }>): Promise<ComponentUnit[]> {
  const tenantId = uow.tenantId;
  return query(
    uow.manager,
    sql`SELECT k.item_id, k.uom_id, u.decimals,
               CASE WHEN i.base_uom_id = k.uom_id THEN 1 ELSE c.factor END AS factor
          FROM unnest(${pairs.map((p) => p.itemId)}::uuid[], ${pairs.map((p) => p.uomId)}::uuid[]) AS k(item_id, uom_id)
          JOIN items i ON i.tenant_id = ${tenantId} AND i.id = k.item_id
          JOIN uoms u ON u.tenant_id = ${tenantId} AND u.id = i.base_uom_id
          LEFT JOIN item_uom_conversions c ON c.tenant_id = ${tenantId} AND c.item_id = k.item_id AND c.uom_id = k.uom_id`,
  );
}

/** Stamps each component line `ids[i]` of the work order with the reservation `reservationIds[i]` made for it. */
export async function setComponentReservations(uow: UnitOfWork, workOrderId: string, ids: string[], reservationIds: string[]): Promise<void> {
  await query(
    uow.manager,
    sql`UPDATE work_order_components c SET reservation_id = k.reservation_id
          FROM unnest(${ids}::uuid[], ${reservationIds}::uuid[]) AS k(id, reservation_id)
         WHERE c.tenant_id = ${uow.tenantId} AND c.work_order_id = ${workOrderId} AND c.id = k.id`,
  );
}

/** Sets each component line `ids[i]` of the work order's qty_issued to `qtys[i]` (numeric text). */
export async function setComponentsIssued(uow: UnitOfWork, workOrderId: string, ids: string[], qtys: string[]): Promise<void> {
  await query(
    uow.manager,
    sql`UPDATE work_order_components c SET qty_issued = k.qty FROM unnest(${ids}::uuid[], ${qtys}::numeric[]) AS k(id, qty)
         WHERE c.tenant_id = ${uow.tenantId} AND c.work_order_id = ${workOrderId} AND c.id = k.id`,
  );
}
