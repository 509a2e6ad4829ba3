import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../database/unit-of-work';
import { empty, GENERIC, query, raw, Raw, Sql, sql } from '../database/sql';

export type NumberPrefix = 'PO' | 'SO' | 'TO' | 'WO' | 'RQ' | 'GR' | 'CS' | 'TX' | 'RS';

/**
 * SQL that takes the tenant's next number of `prefix` — a CTE body returning `no`, the formatted
 * number (`TX-000042`) — for a statement that stamps it on the row it inserts. The counter row stays
 * locked until COMMIT, so take it in the last statement before COMMIT where you can. `when`: a condition
 * on the statement's other CTEs (code-chosen text, or a fragment) — the number is taken only if it holds,
 * and only once the CTEs it reads have run to their end (counter writes: their rows come before the
 * number in the lock order, see `CounterWrite`).
 */
export const nextNumberSql = (tenantId: string, prefix: NumberPrefix, when?: string | Sql): Sql => sql`
  INSERT INTO document_sequences AS q (tenant_id, prefix, last_value)
  SELECT ${tenantId}, '${raw(prefix)}', 1${when ? sql` WHERE ${typeof when === 'string' ? raw(when) : when}` : empty}
  ON CONFLICT (tenant_id, prefix) DO UPDATE SET last_value = q.last_value + 1
  RETURNING ${numberText(prefix, 'q.last_value')} AS no`;

/**
 * `nextNumberSql` for `count` documents at once (one counter update for a batch of postings): returns
 * `last_value`, the range's last number; the range is `last_value - count + 1 … last_value`, each
 * formatted by `numberText`.
 */
export const numberRangeSql = (tenantId: string, prefix: NumberPrefix, count: number, when: string): Sql => sql`
  INSERT INTO document_sequences AS q (tenant_id, prefix, last_value)
  SELECT ${tenantId}, '${raw(prefix)}', ${count}::bigint WHERE ${raw(when)}
  ON CONFLICT (tenant_id, prefix) DO UPDATE SET last_value = q.last_value + ${count}::bigint
  RETURNING q.last_value`;

/** A document number as text (`TX-000042`): the prefix and the number `value` (an SQL expression), six digits at least. */
export const numberText = (prefix: NumberPrefix, value: string): Raw =>
  raw(`'${prefix}-' || lpad((${value})::text, greatest(6, length((${value})::text)), '0')`);

/**
 * Per-tenant sequential document numbers (`PO-000001`, …), unique and gap-free per tenant: the counter
 * row is incremented atomically in the caller's transaction (a rollback gives the number back). The row
 * is locked from then until COMMIT, so every write of the tenant that needs a number of that prefix
 * queues behind it: take numbers as late as possible.
 */
@Injectable()
export class DocumentNumbers {
  constructor(private readonly uow: UnitOfWork) {}

  async next(prefix: NumberPrefix): Promise<string> {
    const [{ no }] = await query(this.uow.manager, nextNumberSql(this.uow.tenantId, prefix), GENERIC);
    return no;
  }
}
