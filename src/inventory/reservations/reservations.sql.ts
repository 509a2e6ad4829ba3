import type { EntityManager } from 'typeorm';
import { cursorOf, Keyset } from '../../common/cursor';
import { SqlFilters } from '../../database/filters.sql';
import { GENERIC, query, raw, sql } from '../../database/sql';
import { ALLOCATION_LIVE, RESERVATION_NOW, RESERVATION_STATUS_NOW } from '../ledger/lapsed.sql';
import { AllocationRow, ReservationRow } from '../ledger/views';
import { AllocationQuery, ReservationQuery } from './dto/reservation.dto';

/**
 * The reservation reads that stay SQL: lists read reservations as they stand now (a lapsed one as
 * released, through the `lapsed.sql` fragments), which an entity's columns cannot say.
 */

const newest = (alias: string) => [
  { expr: `${alias}.created_at`, desc: true, type: 'timestamptz' as const },
  { expr: `${alias}.id`, desc: true, type: 'uuid' as const },
];
/** The lists' documented orders (cursor paging: src/common/cursor.ts). */
export const RESERVATIONS = new Keyset('reservations', newest('r'));
export const ALLOCATIONS = new Keyset('allocations', newest('a'));

/** A page of reservations: active (open, allocated) ones unless `status` is given; newest first. */
export function listReservations(m: EntityManager, tenantId: string, q: ReservationQuery) {
  const at = cursorOf(RESERVATIONS, q);
  const f = new SqlFilters(tenantId, 'r')
    .add((s) => sql`${raw(RESERVATION_STATUS_NOW)} = ANY(${s}::text[])`, q.status ? [q.status] : ['open', 'allocated'])
    .add((v) => sql`r.item_id = ${v}`, q.itemId)
    .add((v) => sql`r.facility_id = ${v}`, q.facilityId)
    .add((v) => sql`r.demand_id = ${v}`, q.demandId)
    .search(['r.reservation_no', 'r.notes'], q.q);
  return f.pageOf<ReservationRow>(m, (after) => sql`SELECT ${raw(RESERVATION_NOW)} FROM reservations r WHERE ${f.where} AND ${after}`, RESERVATIONS, q, at);
}

/** A page of live hard allocations; newest first. */
export function listAllocations(m: EntityManager, tenantId: string, q: AllocationQuery) {
  const at = cursorOf(ALLOCATIONS, q);
  const f = new SqlFilters(tenantId, 'a')
    .always(sql`${raw(ALLOCATION_LIVE)}`)
    .add((v) => sql`a.reservation_id = ${v}`, q.reservationId)
    .add((v) => sql`a.item_id = ${v}`, q.itemId)
    .add((v) => sql`a.location_id = ${v}`, q.locationId);
  return f.pageOf<AllocationRow>(m, (after) => sql`SELECT a.* FROM allocations a WHERE ${f.where} AND ${after}`, ALLOCATIONS, q, at);
}

/**
 * The reservation's number and the document that made it for itself, if any ("sales order SO-…",
 * "work order WO-…": the document line names the reservation); undefined for an unknown reservation.
 */
export async function reservationOwner(m: EntityManager, tenantId: string, id: string): Promise<{ reservation_no: string; owner: string | null } | undefined> {
  const [row]: Array<{ reservation_no: string; owner: string | null }> = await query(
    m,
    sql`SELECT r.reservation_no,
              coalesce(
                (SELECT 'sales order ' || o.order_no FROM sales_order_lines l JOIN sales_orders o ON o.tenant_id = l.tenant_id AND o.id = l.sales_order_id
                  WHERE l.tenant_id = r.tenant_id AND l.id = r.demand_line_id AND l.reservation_id = r.id),
                (SELECT 'work order ' || w.wo_no FROM work_order_components c JOIN work_orders w ON w.tenant_id = c.tenant_id AND w.id = c.work_order_id
                  WHERE c.tenant_id = r.tenant_id AND c.id = r.demand_line_id AND c.reservation_id = r.id)) AS owner
         FROM reservations r WHERE r.tenant_id = ${tenantId} AND r.id = ${id}`,
    // on every reservation change: planned once per connection (key look-ups only)
    GENERIC,
  );
  return row;
}
