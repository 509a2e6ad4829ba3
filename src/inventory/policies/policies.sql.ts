import type { EntityManager } from 'typeorm';
import { cursorOf, newestFirst } from '../../common/cursor';
import type { PageQuery } from '../../common/pagination';
import { SqlFilters } from '../../database/filters.sql';
import { Sql, sql } from '../../database/sql';
import { lapsedHolds } from '../ledger/lapsed.sql';

/** A row of the reorder suggestions: an active policy's quantities and its projected quantity. */
export interface SuggestionRow {
  id: string;
  item_id: string;
  facility_id: string;
  min_qty: string;
  max_qty: string;
  safety_stock: string;
  reorder_qty: string;
  created_at: Date;
  projected_qty: string;
}

/** The suggestions' documented order, newest policy first (cursor paging: src/common/cursor.ts). */
export const SUGGESTIONS = newestFirst('suggestions', '', 'created_at');

/**
 * One page of the active policies of the tenant whose projected quantity is below minQty + safetyStock,
 * newest policy first: projectedQty = available on hand − open unallocated reserved − allocated
 * (inventory_positions; 0 without a row) + `incoming` (a scalar fragment over the policy row's
 * `r.item_id` and `r.facility_id`: IncomingSupply).
 */
export function suggestionsPage(
  m: EntityManager,
  tenantId: string,
  filters: { itemId?: string; facilityId?: string },
  incoming: Sql,
  page: PageQuery,
): Promise<{ rows: SuggestionRow[]; count: number; nextCursor: string | null }> {
  const at = cursorOf(SUGGESTIONS, page);
  const f = new SqlFilters(tenantId, 'r')
    .add((v) => sql`r.item_id = ${v}`, filters.itemId)
    .add((v) => sql`r.facility_id = ${v}`, filters.facilityId);
  // Reservations that expired (and the expiry job has not released yet) hold nothing.
  const projection = (after: Sql) => sql`WITH ${lapsedHolds(tenantId)}, projection AS (
      SELECT r.id, r.item_id, r.facility_id, r.min_qty, r.max_qty, r.safety_stock, r.reorder_qty, r.created_at,
             coalesce(p.qty_available_on_hand - p.qty_reserved - p.qty_allocated, 0) + coalesce(h.allocated + h.reserved, 0)
               + ${incoming} AS projected_qty
        FROM reorder_policies r
        LEFT JOIN inventory_positions p ON p.tenant_id = r.tenant_id AND p.item_id = r.item_id AND p.facility_id = r.facility_id
        LEFT JOIN lapsed_holds h ON h.item_id = r.item_id AND h.facility_id = r.facility_id
       WHERE ${f.where} AND r.is_active)
    SELECT * FROM projection WHERE projected_qty < min_qty + safety_stock AND ${after}`;
  return f.pageOf<SuggestionRow>(m, projection, SUGGESTIONS, page, at);
}
