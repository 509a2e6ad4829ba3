import type { EntityManager } from 'typeorm';
import { invalidState, notFound } from '../common/errors';
import { assertVersion } from '../common/versioning';

/** The audit columns every mutable document row has (snake_case, as pg returns them). */
export interface DocumentRow {
  id: string;
  status: string;
  version: number;
  created_by: string;
  updated_by: string;
  created_at: Date;
  updated_at: Date;
}

/** The audit fields of a document's response: version, who created and last changed it, when. */
export const auditView = (r: Pick<DocumentRow, 'version' | 'created_by' | 'updated_by' | 'created_at' | 'updated_at'>) => ({
  version: r.version,
  createdBy: r.created_by,
  updatedBy: r.updated_by,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export interface LockOptions<T> {
  /** e.g. 'Transfer order', for 404 and 409 messages. */
  what: string;
  /** The document's number, for messages. */
  numberOf: (row: T) => string;
  /** Statuses the action is allowed in. */
  allowed: string[];
  /** What is refused, e.g. 'only a draft transfer order can be shipped'. */
  refusal: string;
  ifMatch?: number;
}

/**
 * Locks a document row for the rest of the unit of work (so concurrent actions on it queue), then
 * checks If-Match (412) and that its status allows the action (409 invalid_state naming the status).
 */
export async function lockDocument<T extends DocumentRow>(
  m: EntityManager,
  table: string,
  tenantId: string,
  id: string,
  options: LockOptions<T>,
): Promise<T> {
  const [row]: T[] = await m.query(`SELECT * FROM ${table} WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, [tenantId, id]);
  if (!row) throw notFound(options.what);
  assertVersion(row.version, options.ifMatch);
  if (!options.allowed.includes(row.status))
    throw invalidState(`${options.what} ${options.numberOf(row)} is ${row.status}; ${options.refusal}`);
  return row;
}

/**
 * Applies `set` (an SQL SET list using $4, $5… for `params`, or '') to a document row: every change
 * is version + 1, stamped with the acting user and now().
 */
export async function touchDocument(
  m: EntityManager,
  table: string,
  key: { tenantId: string; id: string; userId: string },
  set = '',
  params: unknown[] = [],
): Promise<void> {
  await m.query(
    `UPDATE ${table} SET ${set ? `${set}, ` : ''}version = version + 1, updated_by = $3, updated_at = now()
      WHERE tenant_id = $1 AND id = $2`,
    [key.tenantId, key.id, key.userId, ...params],
  );
}
