import { assertVersion, invalidState, notFound } from '../common/errors';
import type { UnitOfWork } from '../database/unit-of-work';

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

/**
 * A document's state machine as a table: for each action, the states it is allowed from and (when it
 * sets one directly) the state it leads to. The 409 invalid_state message of a refused action comes
 * from here, so it always names the current state and the states that would allow the action.
 */
export class Transitions<S extends string, A extends string> {
  constructor(
    /** e.g. 'Transfer order', for messages. */
    readonly what: string,
    readonly table: Readonly<Record<A, { from: readonly S[]; to?: S }>>,
  ) {}

  /** Whether `action` is allowed from `status`. */
  allows(action: A, status: string): boolean {
    return (this.table[action].from as readonly string[]).includes(status);
  }

  /** Throws 409 invalid_state when `action` is not allowed from `status`. */
  check(action: A, status: string, number: string): void {
    if (this.allows(action, status)) return;
    const from = this.table[action].from;
    throw invalidState(`${this.what} ${number} is ${status}; ${action} is allowed only when it is ${from.join(' or ')}`);
  }

  /** The state `action` leads to (for actions that set one directly). */
  target(action: A): S {
    const to = this.table[action].to;
    if (!to) throw new Error(`${this.what}: action ${action} has no fixed target state`);
    return to;
  }
}

/**
 * The shared way a document module reads, locks and changes its header row (plain parameterised SQL,
 * the tenant named in every statement). One instance per document table.
 */
export class DocumentStore<T extends DocumentRow, S extends string, A extends string> {
  constructor(
    private readonly uow: UnitOfWork,
    /** The header table, e.g. `transfer_orders`. */
    readonly table: string,
    readonly transitions: Transitions<S, A>,
    /** The document's number, for messages. */
    readonly numberOf: (row: T) => string,
  ) {}

  /** The header row, or 404. */
  async find(id: string): Promise<T> {
    const [row]: T[] = await this.uow.manager.query(`SELECT * FROM ${this.table} WHERE tenant_id = $1 AND id = $2`, [this.uow.tenantId, id]);
    if (!row) throw notFound(this.transitions.what);
    return row;
  }

  /**
   * Locks the header row for the rest of the unit of work (so concurrent actions on it queue), then
   * checks If-Match (412) and that the transition table allows `action` (409 naming the state).
   */
  async lockFor(action: A, id: string, ifMatch?: number): Promise<T> {
    const [row]: T[] = await this.uow.manager.query(`SELECT * FROM ${this.table} WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, [
      this.uow.tenantId,
      id,
    ]);
    if (!row) throw notFound(this.transitions.what);
    assertVersion(row.version, ifMatch);
    this.transitions.check(action, row.status, this.numberOf(row));
    return row;
  }

  /**
   * Applies `set` (an SQL SET list using $4, $5… for `params`, or '') to the header row: every change
   * is version + 1, stamped with the acting user and now().
   */
  async touch(id: string, set = '', params: unknown[] = []): Promise<void> {
    await this.uow.manager.query(
      `UPDATE ${this.table} SET ${set ? `${set}, ` : ''}version = version + 1, updated_by = $3, updated_at = now()
        WHERE tenant_id = $1 AND id = $2`,
      [this.uow.tenantId, id, this.uow.userId, ...params],
    );
  }

  /** Moves the document to the target state of `action` (and applies `set`, as `touch`). */
  async move(id: string, action: A, set = '', params: unknown[] = []): Promise<void> {
    const n = params.length + 4;
    await this.touch(id, `status = $${n}${set ? `, ${set}` : ''}`, [...params, this.transitions.target(action)]);
  }
}
