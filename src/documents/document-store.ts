import type { EntityTarget } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import type { DocumentEntity } from '../common/entity';
import { invalidState, notFound } from '../common/errors';
import type { TenantRepository, TenantWhere, Untenanted } from '../database/tenant-repository';
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
 * The shared way a document module reads, locks and changes its header row: through its entity's
 * TenantRepository (the tenant is added to every statement), with versioning and If-Match done once for
 * every versioned row (TenantRepository.lockVersion / touch) and the state machine checked here.
 * One instance per document entity; it holds no state of a request (the repository comes from the
 * current unit of work on each call).
 */
export class DocumentStore<E extends DocumentEntity & { status: string }, S extends string, A extends string> {
  constructor(
    private readonly uow: UnitOfWork,
    readonly entity: EntityTarget<E>,
    readonly transitions: Transitions<S, A>,
    /** The document's number, for messages. */
    readonly numberOf: (row: E) => string,
  ) {}

  /** The current unit of work's repository of the header entity. */
  get repository(): TenantRepository<E> {
    return this.uow.repository(this.entity);
  }

  /** The header row, or 404. */
  async find(id: string): Promise<E> {
    const row = await this.repository.findOne({ id } as TenantWhere<E>);
    if (!row) throw notFound(this.transitions.what);
    return row;
  }

  /**
   * Locks the header row for the rest of the unit of work (so concurrent actions on it queue), then
   * checks If-Match (412) and that the transition table allows `action` (409 naming the state).
   */
  async lockFor(action: A, id: string, ifMatch?: number): Promise<E> {
    const row = await this.repository.lockVersion(id, ifMatch, this.transitions.what);
    this.transitions.check(action, row.status, this.numberOf(row));
    return row;
  }

  /** Applies `patch` to the header row: every change is version + 1, stamped with the acting user and now(). */
  touch(id: string, patch: Patch<E> = {}): Promise<void> {
    return this.repository.touch(id, patch as Untenanted<QueryDeepPartialEntity<E>>);
  }

  /** Moves the document to the target state of `action` (and applies `patch`, as `touch`). */
  move(id: string, action: A, patch: Patch<E> = {}): Promise<void> {
    return this.touch(id, { ...patch, status: this.transitions.target(action) } as Patch<E>);
  }
}

/** The header fields an action may set (the audit columns are the store's). */
export type Patch<E> = Partial<Omit<QueryDeepPartialEntity<E>, 'tenantId' | 'id' | 'version' | 'createdBy' | 'updatedBy' | 'createdAt' | 'updatedAt'>>;
