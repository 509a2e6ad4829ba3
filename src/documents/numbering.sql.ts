import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../database/unit-of-work';
import { empty, GENERIC, query, raw, Sql, sql } from '../database/sql';

export type NumberPrefix = 'PO' | 'SO' | 'TO' | 'WO' | 'RQ' | 'GR' | 'CS' | 'TX' | 'RS';

/**
 * SQL that takes the tenant's next number of `prefix` — a CTE body returning `no`, the formatted number
 * (`TX-000042`) — for a statement that stamps it on the row it inserts. The counter row stays locked
 * until COMMIT, so take it in the last statement before COMMIT where you can. `when`: a condition (SQL
 * text chosen by the code) on the statement's other CTEs — the number is taken only if it holds, and
 * only once the CTEs it reads have run to their end (counter writes: their rows come before the number
 * in the lock order, see `CounterWrite`).
 */
export const nextNumberSql = (tenantId: string, prefix: NumberPrefix, when?: string): Sql => sql`
  INSERT INTO document_sequences AS q (tenant_id, prefix, last_value)
  SELECT ${tenantId}, '${raw(prefix)}', 1${when ? sql` WHERE ${raw(when)}` : empty}
  ON CONFLICT (tenant_id, prefix) DO UPDATE SET last_value = q.last_value + 1
  RETURNING '${raw(prefix)}-' || lpad(q.last_value::text, greatest(6, length(q.last_value::text)), '0') AS no`;

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
