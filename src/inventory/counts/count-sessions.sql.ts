import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { query, sql } from '../../database/sql';
import { sql as numeric } from '../../documents/quantity';

/**
 * The set-based statements of count sessions over all the counted lines at once (one statement whatever
 * the number of lines); the rest of the module goes through the entities' repositories.
 */

/** A count of one (item, location, lot number), in base units. */
export interface NewCount {
  itemId: string;
  locationId: string;
  lotNo: string | null;
  lotId: string | null;
  qty: Decimal;
}

/** Records `counts` in session `sessionId`: a later count of the same (item, location, lotNo) replaces the earlier. */
export async function upsertCounts(m: EntityManager, tenantId: string, sessionId: string, userId: string, counts: NewCount[]): Promise<void> {
  await query(
    m,
    sql`INSERT INTO count_lines (tenant_id, id, session_id, item_id, location_id, lot_no, lot_id, counted_qty, counted_by)
        SELECT ${tenantId}, k.id, ${sessionId}, k.item_id, k.location_id, k.lot_no, k.lot_id, k.qty, ${userId}
          FROM unnest(${counts.map(() => randomUUID())}::uuid[], ${counts.map((c) => c.itemId)}::uuid[], ${counts.map((c) => c.locationId)}::uuid[],
                      ${counts.map((c) => c.lotNo)}::text[], ${counts.map((c) => c.lotId)}::uuid[], ${counts.map((c) => numeric(c.qty))}::numeric[])
               AS k(id, item_id, location_id, lot_no, lot_id, qty)
        ON CONFLICT ON CONSTRAINT count_lines_key DO UPDATE
           SET counted_qty = EXCLUDED.counted_qty, lot_id = EXCLUDED.lot_id, counted_by = EXCLUDED.counted_by, counted_at = now()`,
  );
}

/** What completion found for a counted line: the system quantity and the variance. */
export interface CountResult {
  lineId: string;
  system: Decimal;
  variance: Decimal;
}

/**
 * Stores the system quantity and variance of each line of session `sessionId`, and the lot of each
 * line's lot number (a lot counted as new exists once the completion's posting created it).
 */
export async function recordResults(m: EntityManager, tenantId: string, sessionId: string, results: CountResult[]): Promise<void> {
  await query(
    m,
    sql`UPDATE count_lines c
           SET system_qty = k.system_qty, variance_qty = k.variance_qty,
               lot_id = (SELECT t.id FROM lots t WHERE t.tenant_id = c.tenant_id AND t.item_id = c.item_id AND t.lot_no = c.lot_no)
          FROM unnest(${results.map((r) => r.lineId)}::uuid[], ${results.map((r) => numeric(r.system))}::numeric[], ${results.map((r) => numeric(r.variance))}::numeric[])
               AS k(id, system_qty, variance_qty)
         WHERE c.tenant_id = ${tenantId} AND c.session_id = ${sessionId} AND c.id = k.id`,
  );
}
