import { query, sql } from '../database/sql';
import type { UnitOfWork } from '../database/unit-of-work';

/**
 * The BOM statements that are not a read or write of one entity: the per-item version counter, the
 * tenant's activation lock and the cycle check over the active BOMs.
 */

/**
 * The output item's next BOM version number (1, 2, …), from its counter row in document_sequences (prefix
 * `BOM:<item id>`), which stays locked until COMMIT: versions created in parallel queue instead of clashing.
 */
export async function nextBomVersion(uow: UnitOfWork, itemId: string): Promise<number> {
  const [{ version_no: versionNo }]: Array<{ version_no: number }> = await query(
    uow.manager,
    sql`INSERT INTO document_sequences AS q (tenant_id, prefix, last_value) VALUES (${uow.tenantId}, 'BOM:' || ${itemId}, 1)
        ON CONFLICT (tenant_id, prefix) DO UPDATE SET last_value = q.last_value + 1 RETURNING last_value::int AS version_no`,
  );
  return versionNo;
}

/**
 * The tenant's BOM activation lock: a transaction-level advisory lock, released at COMMIT, so the
 * activations of one tenant queue and each one's cycle check sees every activation committed before it.
 */
export async function lockBomActivations(uow: UnitOfWork): Promise<void> {
  await query(uow.manager, sql`SELECT pg_advisory_xact_lock(hashtextextended('bom-activation:' || ${uow.tenantId}, 0))`);
}

/**
 * One of `componentItemIds` whose active BOM uses `outputId` at any depth, or undefined: one recursive
 * query over the active BOMs (UNION, so a cycle already in the data cannot make it loop).
 */
export async function cycleRoot(uow: UnitOfWork, outputId: string, componentItemIds: string[]): Promise<string | undefined> {
  const tenantId = uow.tenantId;
  const [hit]: Array<{ root: string }> = await query(
    uow.manager,
    sql`WITH RECURSIVE reach(root, item_id) AS (
          SELECT r, r FROM unnest(${componentItemIds}::uuid[]) AS r
          UNION
          SELECT reach.root, c.item_id
            FROM reach
            JOIN boms b ON b.tenant_id = ${tenantId} AND b.item_id = reach.item_id AND b.status = 'active'
            JOIN bom_components c ON c.tenant_id = ${tenantId} AND c.bom_id = b.id)
        SELECT root FROM reach WHERE item_id = ${outputId} LIMIT 1`,
  );
  return hit?.root;
}
