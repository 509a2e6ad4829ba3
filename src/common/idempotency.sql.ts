import type { EntityManager } from 'typeorm';
import { GENERIC, query, sql } from '../database/sql';
import { IDEMPOTENCY_TTL_HOURS } from './idempotency';

/** A key's row as a replay reads it. */
export interface StoredKey {
  request_hash: string;
  status_code: number | null;
  response: unknown;
}

/**
 * Takes the key for this request, in one statement: a new row, or the row of an expired key (older than the
 * TTL counts as absent) taken over in place. Returns whether it was taken; a live key's row is left as it is
 * (and, as with any conflicting insert, this waits while the request holding it is still in flight).
 */
export async function takeKey(
  manager: EntityManager,
  row: { tenantId: string; key: string; hash: string; status?: number; response?: string },
): Promise<boolean> {
  const taken: unknown[] = await query(
    manager,
    sql`INSERT INTO idempotency_keys AS k (tenant_id, key, request_hash, status_code, response)
     VALUES (${row.tenantId}, ${row.key}, ${row.hash}, ${row.status ?? null}, ${row.response ?? null}::json)
     ON CONFLICT (tenant_id, key) DO UPDATE
       SET request_hash = EXCLUDED.request_hash, status_code = EXCLUDED.status_code, response = EXCLUDED.response, created_at = now()
       WHERE k.created_at < now() - make_interval(hours => ${IDEMPOTENCY_TTL_HOURS})
     RETURNING k.key`,
    GENERIC,
  );
  return taken.length > 0;
}

/** The row of a key this request could not take (undefined: gone meanwhile). */
export async function storedKey(manager: EntityManager, tenantId: string, key: string): Promise<StoredKey | undefined> {
  const [stored]: (StoredKey | undefined)[] = await query(
    manager,
    sql`SELECT request_hash, status_code, response FROM idempotency_keys WHERE tenant_id = ${tenantId} AND key = ${key}`,
  );
  return stored;
}

/** Stores the response of the request that took the key (`response`: the JSON text sent, stored unparsed). */
export async function storeResponse(manager: EntityManager, tenantId: string, key: string, statusCode: number, response: string): Promise<void> {
  await query(
    manager,
    sql`UPDATE idempotency_keys SET status_code = ${statusCode}, response = ${response}::json WHERE tenant_id = ${tenantId} AND key = ${key}`,
    GENERIC,
  );
}
