import { AppError, constraintOf } from '../../common/errors';
import { GENERIC, query, Sql } from '../../database/sql';
import { COMMIT_IN_DOUBT, LostRace, UnitOfWork } from '../../database/unit-of-work';

/** What a queued member is told: lead this batch (it is the first of them), or here is your committed row. */
export type Turn<M, R> = { lead: M[] } | { row: R };

/** A write that may ride in a batch: its id (the row written for it comes back with it) and, while it waits in a queue, its turn. */
export interface Batched<M, R> {
  id: string;
  turn?: { resolve(turn: Turn<M, R>): void; reject(err: unknown): void };
}

/** How one kind of write is batched. */
export interface BatchWay<M, R> {
  /** One statement that writes `members` of tenant `tenantId` (one or more, in arrival order) all or nothing, one row per member written (its `id`). */
  statement(tenantId: string, members: M[]): Sql;
  /** Constraints whose violation means that a concurrent write got there first: the members go the full way, not an error. */
  races: ReadonlySet<string>;
  /** Told of each batch of two or more members: its size and whether it was written. */
  onBatch?(size: number, written: boolean): void;
}

/**
 * Group commit of a tenant's one-statement writes of one kind, per process (direct postings on the TX
 * number row, new reservations on the RS one). Each kind takes one tenant number row, which stays locked
 * through its COMMIT's flush: one at a time, each paid a WAL flush of its own. Here a write that arrives
 * while another of its tenant is in flight waits in the tenant's queue; when the batch in flight has its
 * statement's answer (its COMMIT still flushing), the queue (up to `max`) becomes the next batch, led by
 * its first member's unit of work: one statement, one range of numbers (`last_value + k`, taken last,
 * after every other row it locks), one COMMIT and one flush for all of them. Each member keeps its own
 * answer; the batch is all or nothing, and when it cannot be written whole each member goes the full way
 * on its own (its exact answer, its error). Numbers stay gap-free and in commit order: a range is taken
 * under the row lock and committed with its rows.
 */
export class PostingBatches<M extends Batched<M, R>, R extends { id: string }> {
  /** Tenants with a write in flight, and who waits for the next batch. */
  private readonly tenants = new Map<string, M[]>();
  /** Members waiting, all tenants. */
  private waiting = 0;

  constructor(
    private readonly max: number,
    private readonly way: BatchWay<M, R>,
    /** Told how many members wait, whenever that changes. */
    private readonly onWaiting: (n: number) => void = () => undefined,
  ) {}

  /**
   * Writes `member` in `uow`'s transaction, or in a batch: while a write of the same tenant is in flight
   * in this process, it joins the tenant's next batch instead of queueing on the number row by itself.
   * Only a write that is its unit of work's whole transaction can ride in another's (nothing before it,
   * nothing after it: no Idempotency-Key response to store, no statement of its own to follow); `batching`
   * false writes it alone. A `LostRace` thrown here sends the unit of work the full way.
   */
  async write(uow: UnitOfWork, member: M, batching: boolean): Promise<R> {
    if (!batching || !uow.commitsFirstStatement) return this.lead(uow, [member], false);
    const turn = await this.join(uow.tenantId, member);
    return 'row' in turn ? turn.row : this.lead(uow, turn.lead, true);
  }

  /** Resolves at once with `{ lead: [member] }` when nothing of the tenant is in flight; else when the member's turn comes. */
  private join(tenant: string, member: M): Promise<Turn<M, R>> {
    const queue = this.tenants.get(tenant);
    if (!queue) {
      this.tenants.set(tenant, []);
      return Promise.resolve({ lead: [member] });
    }
    return new Promise<Turn<M, R>>((resolve, reject) => {
      member.turn = { resolve, reject };
      queue.push(member);
      this.onWaiting(++this.waiting);
    });
  }

  /** The batch in flight has its answer: the tenant's next batch (if any waits) goes out. */
  private next(tenant: string): void {
    const queue = this.tenants.get(tenant);
    if (!queue) return;
    if (!queue.length) {
      this.tenants.delete(tenant);
      return;
    }
    const batch = queue.splice(0, this.max);
    this.waiting -= batch.length;
    this.onWaiting(this.waiting);
    batch[0].turn!.resolve({ lead: batch });
  }

  /**
   * Runs `members` (`members[0]` is this unit of work's own) in `uow`'s transaction, in one statement sent
   * with the unit of work's opening and its COMMIT; the other members are answered once that COMMIT is
   * confirmed. Any failure sends every member the full way (LostRace), each in its own unit of work:
   * nothing of the batch was kept.
   */
  private async lead(uow: UnitOfWork, members: M[], batched: boolean): Promise<R> {
    const [self, ...others] = members;
    const tenant = uow.tenantId;
    if (batched && !uow.usable) {
      // This request's connection died or its deadline passed while it waited: the next member leads the
      // batch instead (nothing was sent), and this one runs again on a new connection, or ends by its deadline.
      if (others.length) others[0].turn!.resolve({ lead: others });
      else this.next(tenant);
      throw new LostRace('its connection was lost while it waited for its batch');
    }
    let rows: R[] | undefined;
    let failure: unknown;
    try {
      const statement = this.way.statement(tenant, members);
      // Sent with the COMMIT only as the unit of work's first statement: when it writes nothing, nothing
      // at all is committed, and the unit of work may run again.
      rows = await uow.commitWith(() => query<R[]>(uow.manager, statement, GENERIC), { onlyFirst: true });
    } catch (err) {
      failure = err;
    } finally {
      // The tenant's next batch goes out now: its statement queues on the number row until this COMMIT is flushed.
      if (batched) this.next(tenant);
    }
    const byId = new Map((rows ?? []).map((r) => [r.id, r]));
    const whole = byId.size === members.length;
    if (members.length > 1) this.way.onBatch?.(members.length, whole);
    if (!whole) {
      const notWritten = new LostRace(failure === undefined ? 'a batched write needs the full way' : `a batched write failed: ${String(failure)}`, { cause: failure });
      if (failure === undefined) {
        // The statement wrote nothing (it writes all of its members or none): each goes the full way.
        for (const m of others) m.turn!.reject(notWritten);
        throw notWritten;
      }
      // The members learn what this attempt ends with: a COMMIT in doubt (the connection broke after it was
      // sent: the batch may be written) is theirs too; anything else wrote nothing, and each goes the full way.
      if (others.length) {
        uow.committed().then(
          // the server committed what the statement did, whatever failed on this side: it may be written
          () => others.forEach((m) => m.turn!.reject(new AppError(503, 'service_unavailable', COMMIT_IN_DOUBT))),
          (err: unknown) => others.forEach((m) => m.turn!.reject(err instanceof AppError ? err : notWritten)),
        );
      }
      // Another write changed the rows since this statement read them, leaving too little; in a batch,
      // whichever member it was, this one goes the full way too (its own exact answer).
      const constraint = constraintOf(failure);
      if (others.length || (constraint && this.way.races.has(constraint))) throw notWritten;
      throw failure;
    }
    if (others.length) {
      uow.committed().then(
        () => others.forEach((m) => m.turn!.resolve({ row: byId.get(m.id)! })),
        // a COMMIT in doubt is theirs too; a COMMIT that answered ROLLBACK kept nothing: the full way
        (err: unknown) => others.forEach((m) => m.turn!.reject(err instanceof AppError ? err : new LostRace(`its batch did not commit: ${String(err)}`))),
      );
    }
    return byId.get(self.id)!;
  }
}
