import type { EntityManager } from 'typeorm';
import { GENERIC, query, raw, sql } from '../../database/sql';
import { ALLOCATION_LIVE, RESERVATION_NOW } from './lapsed.sql';
import { ALLOCATION_COLUMNS, AllocationRow, ReservationRow } from './views';

/**
 * The ledger's reads of reservations and allocations as they stand now (without locks): a reservation
 * past its expiry reads as released, and its allocations as gone, whether or not the expiry job has run.
 * Key look-ups on the request path: prepared, with their generic plans.
 */

/** One reservation of `tenantId` as it stands now, or undefined. */
export async function reservationNow(m: EntityManager, tenantId: string, id: string): Promise<ReservationRow | undefined> {
  const [r]: ReservationRow[] = await query(m, sql`SELECT ${raw(RESERVATION_NOW)} FROM reservations r WHERE r.tenant_id = ${tenantId} AND r.id = ${id}`, GENERIC);
  return r;
}

/** The live allocations of reservations, oldest first. */
export function liveAllocations(m: EntityManager, tenantId: string, reservationIds: string[]): Promise<AllocationRow[]> {
  return query(
    m,
    sql`SELECT ${raw(ALLOCATION_COLUMNS)} FROM allocations a
        WHERE a.tenant_id = ${tenantId} AND a.reservation_id = ANY(${reservationIds}::uuid[]) AND ${raw(ALLOCATION_LIVE)} ORDER BY a.created_at, a.id`,
    GENERIC,
  );
}

/**
 * Up to `limit` tenants that have expired reservations still holding stock, across all tenants: a
 * security-definer function (the unit of work's connection sees one tenant's rows only).
 */
export function tenantsWithExpiredReservations(m: EntityManager, limit: number): Promise<Array<{ tenant_id: string }>> {
  return query(m, sql`SELECT tenant_id FROM tenants_with_expired_reservations(${limit})`);
}
