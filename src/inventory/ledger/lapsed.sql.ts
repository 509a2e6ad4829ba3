/**
 * Reservations whose `expiresAt` has passed stop holding stock at once, though the periodic expiry job
 * (ExpiryJob) releases their rows a little later. Until it does, every read and posting treats them as
 * released: these SQL fragments subtract what such "lapsed" reservations still hold from the counters
 * a read shows. Those without parameters are SQL text (inlined with `raw()`), those that need the tenant
 * are `sql` fragments. Each is cheap: a partial index (`reservations_expiry`) finds the lapsed ones, and
 * there are few between two runs of the job.
 */
import { raw, Sql, sql } from '../../database/sql';

/** True for a reservation row `r` that is open or allocated but past its expiry. */
export const LAPSED = `(r.status IN ('open', 'allocated') AND r.expires_at <= now())`;

/** A reservation's columns as they stand now: a lapsed one reads as released, holding nothing. */
export const RESERVATION_NOW = `
  r.id, r.reservation_no, r.item_id, r.facility_id, r.qty, r.qty_fulfilled, r.demand_type, r.demand_id, r.demand_line_id,
  r.expires_at, r.notes, r.version, r.created_by, r.updated_by, r.created_at, r.updated_at,
  CASE WHEN ${LAPSED} THEN 'released' ELSE r.status END AS status,
  CASE WHEN ${LAPSED} THEN 0 ELSE r.qty_allocated END AS qty_allocated`;

/** The status a reservation `r` reads as now (for filters). */
export const RESERVATION_STATUS_NOW = `(CASE WHEN ${LAPSED} THEN 'released' ELSE r.status END)`;

/** Allocated quantity per balance still counted by lapsed reservations: the CTE `lapsed_allocated(balance_id, qty)`. */
export const lapsedAllocated = (tenantId: string): Sql => sql`lapsed_allocated AS (
  SELECT a.balance_id, sum(a.qty) AS qty
    FROM reservations r JOIN allocations a ON a.tenant_id = r.tenant_id AND a.reservation_id = r.id AND a.status = 'active'
   WHERE r.tenant_id = ${tenantId} AND ${raw(LAPSED)}
   GROUP BY a.balance_id)`;

/**
 * The tenant's (item, facility) positions with a lapsed hold: the CTE `lapsed_at(item_id, facility_id)`,
 * materialized. Few rows by design (the expiry job releases them), read from the partial index
 * `reservations_expiry` (tenant, expiry; the order by expiry makes it the cheapest path whatever the
 * statistics say: without any, every path looks like one row). A batch statement checks its members
 * against it instead of probing reservations per member, a probe whose generic plan on tables without
 * statistics read every active reservation of the tenant by tenant alone.
 */
export const lapsedAt = (tenantId: string): Sql => sql`lapsed_at AS MATERIALIZED (
  SELECT r.item_id, r.facility_id FROM reservations r WHERE r.tenant_id = ${tenantId} AND r.expires_at IS NOT NULL AND ${raw(LAPSED)} ORDER BY r.expires_at)`;

/** Holds per (item, facility) still counted by lapsed reservations: the CTE `lapsed_holds(item_id, facility_id, allocated, reserved)`. */
export const lapsedHolds = (tenantId: string): Sql => sql`lapsed_holds AS (
  SELECT r.item_id, r.facility_id, sum(r.qty_allocated) AS allocated, sum(r.qty - r.qty_allocated - r.qty_fulfilled) AS reserved
    FROM reservations r
   WHERE r.tenant_id = ${tenantId} AND ${raw(LAPSED)}
   GROUP BY r.item_id, r.facility_id)`;

/** An active allocation `a` that no lapsed reservation holds. */
export const ALLOCATION_LIVE = `(a.status = 'active' AND NOT EXISTS (
  SELECT 1 FROM reservations r WHERE r.tenant_id = a.tenant_id AND r.id = a.reservation_id AND ${LAPSED}))`;
