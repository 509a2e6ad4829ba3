import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { ClsService } from 'nestjs-cls';
import { DataSource, EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import { ATTEMPT, Attempt, attemptError, corkTick, EarlyCommit, leanQuery, LostRace, openingStatements, Outcome, PgClient, planMode, ResourceEventKind } from './attempt';
import { AppError } from '../common/errors';
import { UUID_PATTERN } from '../common/uuid';
import { Principal } from '../tenancy/request-context';
import { RETRYABLE_SQLSTATES } from './constants';
import { DEFAULT_POOL, POOL_SETTINGS, PoolSettings } from './data-source';
import { DatabaseConnector } from './connector';
import { wantsGenericPlan } from './prepared';
import { TenantGate } from './tenant-gate';
import { TenantRepository } from './tenant-repository';

export { COMMIT_IN_DOUBT, LostRace } from './attempt';

const MAX_ATTEMPTS = 4;

/**
 * One database transaction per unit of work, bound to the tenant of the current principal.
 * The transaction switches to the RLS-bound role and sets `app.tenant_id` (both transaction-local),
 * so every query inside it sees only that tenant's rows, whatever the code forgets to filter.
 * Deadlocks and serialization failures retry the whole unit of work.
 */
@Injectable()
export class UnitOfWork {
  private readonly logger = new Logger(UnitOfWork.name);

  private readonly gate: TenantGate;
  private readonly requestTimeoutMs: number;
  /** How to end each attempt in progress now (its connection dropped, as at its deadline). */
  private readonly running = new Set<() => void>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly cls: ClsService,
    @Optional() private readonly connector?: DatabaseConnector,
    @Optional() @Inject(POOL_SETTINGS) pool: PoolSettings = DEFAULT_POOL,
  ) {
    this.gate = new TenantGate(pool.tenantMaxConnections ?? Math.max(1, pool.size - 1), pool.acquireTimeoutMs);
    this.requestTimeoutMs = pool.requestTimeoutMs ?? DEFAULT_POOL.requestTimeoutMs!;
  }

  /** Ends every unit of work in progress now, as at its deadline (no COMMIT follows): for a shutdown's cut-off. */
  abortAll(): void {
    for (const abort of this.running) abort();
  }

  /** The current transaction's manager. Fails closed outside a unit of work. */
  get manager(): EntityManager {
    const manager = this.current?.manager;
    if (!manager) throw new Error('No unit of work is active: refusing to touch tenant data outside one');
    return manager;
  }

  /**
   * A repository of `entity` bound to the current tenant (TenantRepository): every call through it carries
   * `tenant_id`, and it runs in this unit of work's transaction. Fails closed outside a unit of work.
   */
  repository<T extends ObjectLiteral & { tenantId: string }>(entity: EntityTarget<T>): TenantRepository<T> {
    return new TenantRepository(this.manager.getRepository(entity), this.tenantId, this.userId);
  }

  /** The current principal. Fails closed when there is none. */
  get principal(): Principal {
    const principal = this.store?.principal as Principal | undefined;
    if (!principal) throw new Error('No tenant context: refusing to touch tenant data without one');
    return principal;
  }

  /**
   * Whether this attempt of the unit of work may write counters it has read without locking them first
   * (an optimistic posting, `Counters.check`): true on the first attempt; after a `LostRace` the unit of
   * work runs again with this false, taking its locks first.
   */
  get optimistic(): boolean {
    return !!this.current && !this.current.locking;
  }

  /** The request context's store, or undefined outside one. */
  private get store(): Record<string | symbol, unknown> | undefined {
    return this.cls.get() as unknown as Record<string | symbol, unknown> | undefined;
  }

  /** The running attempt of this context's unit of work, if any. */
  private get current(): Attempt | undefined {
    return this.store?.[ATTEMPT] as Attempt | undefined;
  }

  get tenantId(): string {
    return this.principal.tenantId;
  }

  get userId(): string {
    return this.principal.userId;
  }

  /**
   * Marks the current unit of work as failed with `err`: it rolls back and ends with that error even if
   * the caller catches it and carries on. For steps that write several statements and may fail between them.
   */
  fail(err: unknown): void {
    const current = this.current;
    if (current && current.failure === undefined) current.failure = err;
  }

  /**
   * Sends COMMIT in the same write as the statement `send` issues, without waiting for that statement's
   * answer: a request whose last statement this is saves a round trip (a read of one statement is then one
   * write), and row locks taken by that statement (a document number) are held only for the commit. `send`
   * must issue exactly one statement and nothing may follow it in the unit of work. It commits early only
   * when that is safe: not after a failure was recorded, not when something will still write after the
   * handler (`keepOpen`, e.g. storing an idempotent response); otherwise it just runs `send`.
   * Should the statement fail, its transaction is aborted and the COMMIT answers ROLLBACK: nothing is kept.
   * `onlyFirst`: commit early only when the statement is the unit of work's first (nothing before it is
   * committed with it), for a statement that may write nothing and have its unit of work run again.
   */
  commitWith<T>(send: () => Promise<T>, options: { onlyFirst?: boolean } = {}): Promise<T> {
    const current = this.current;
    const early = current && this.earlyCommit(current, !!options.onlyFirst);
    if (!early) return send();
    // The statement reaches the driver a few ticks later (TypeORM awaits before sending): the flag
    // stays up until then; the first statement sent takes it down.
    early.armed = true;
    return send().finally(() => (early.armed = false));
  }

  /**
   * Runs `send`'s one statement (a read) in a read-only transaction of its own when nothing of this unit of
   * work has been sent yet, so that its transaction still opens with the statement that follows (which may
   * then be its whole transaction: `commitsFirstStatement`); inside the transaction as usual otherwise.
   */
  readAhead<T>(send: () => Promise<T>): Promise<T> {
    const early = this.current?.early;
    if (!early || early.started) return send();
    early.readAhead = true;
    return send().finally(() => (early.readAhead = false));
  }

  /**
   * Whether a statement sent now through `commitWith(send, { onlyFirst: true })` would be the unit of work's
   * whole transaction, committed with it: nothing sent before it, nothing to follow (no `keepOpen`), no
   * failure recorded. (The direct way's batches take only such postings: DirectPostings.)
   */
  get commitsFirstStatement(): boolean {
    const current = this.current;
    return !!current && !!this.earlyCommit(current, true);
  }

  private earlyCommit(current: Attempt, onlyFirst: boolean): EarlyCommit | undefined {
    const early = current.early;
    if (!early || current.keepOpen > 0 || current.failure !== undefined || (onlyFirst && early.started)) return undefined;
    return early;
  }

  /**
   * Whether a statement sent now in this unit of work can reach the database: the attempt is not past its
   * deadline and its connection is whole (a connection the database dropped is released). For work that
   * waited before its first statement (a batch's leader) and can hand it to another instead.
   */
  get usable(): boolean {
    return !!this.current?.usable();
  }

  /**
   * Settles when the running attempt of this unit of work has ended: resolves once its COMMIT answered
   * COMMIT, rejects with what the attempt failed with otherwise (a COMMIT in doubt: 503). For work done on
   * this transaction's behalf that answers elsewhere (the direct way's batch members). Outside a unit of
   * work: rejects.
   */
  committed(): Promise<void> {
    const current = this.current;
    if (!current) return Promise.reject(new Error('No unit of work is active'));
    if (!current.outcome) {
      let settle!: Outcome['settle'];
      const promise = new Promise<void>((resolve, reject) => (settle = (err) => (err === undefined ? resolve() : reject(err))));
      promise.catch(() => undefined);
      current.outcome = { promise, settle };
    }
    return current.outcome.promise;
  }

  /**
   * Declares that statements follow the handler in this unit of work: `commitWith` must not commit early.
   * Each caller ends its hold with one `finishWith`; the last to do so sends the COMMIT with its statement
   * (an Idempotency-Key's stored response, then the change's events: UnitOfWorkInterceptor).
   */
  keepOpen(event?: ResourceEventKind): void {
    const current = this.current;
    if (!current) return;
    current.keepOpen++;
    if (event) current.resourceEvent = { kind: event, taken: false };
  }

  /**
   * For a handler whose last statement writes the route's resource event itself (a new reservation the
   * direct way): when that event's writer is the only statement still to follow the handler (`keepOpen`
   * with `event`), it is taken over — it will not be written after the handler, and the handler's
   * statement may be the unit of work's whole transaction — and its kind returned. Otherwise undefined: the
   * event is written after the handler as usual (an Idempotency-Key's response follows too, or none).
   */
  takeResourceEvent(): ResourceEventKind | undefined {
    const current = this.current;
    const event = current?.resourceEvent;
    if (!current || !event || event.taken || current.keepOpen !== 1) return undefined;
    event.taken = true;
    current.keepOpen--;
    return event.kind;
  }

  /** Whether the handler took over the route's resource event (`takeResourceEvent`): nothing to write after it. */
  get resourceEventTaken(): boolean {
    return !!this.current?.resourceEvent?.taken;
  }

  /**
   * For the caller of `keepOpen`: its last statement; when no other hold remains it is the unit of work's
   * very last, sent with the COMMIT as `commitWith` does (the same conditions and guarantees apply).
   */
  finishWith<T>(send: () => Promise<T>): Promise<T> {
    const current = this.current;
    if (current && current.keepOpen > 0) current.keepOpen--;
    return this.commitWith(send);
  }

  /**
   * Runs `work` in one transaction for `tenantId` (default: the current principal's). The opening
   * statement (BEGIN and the role/tenant settings) leaves in one write with the work's first statement,
   * so opening costs no round trip of its own; closing costs one (COMMIT or ROLLBACK), and none for a
   * `readOnly` unit of work: each of its statements runs in a `BEGIN READ ONLY` transaction of its own
   * (a write fails), opened and committed in the statement's own write, nothing waiting for the COMMIT;
   * the connection goes back to the pool at once (its next user is pipelined behind the COMMIT). So a read
   * of one statement is one write without its code asking for it.
   */
  async run<T>(work: (manager: EntityManager) => Promise<T>, tenantId?: string, options: { readOnly?: boolean } = {}): Promise<T> {
    if (!this.cls.isActive()) return this.cls.run(() => this.run(work, tenantId, options));
    if (this.current) throw new Error('A unit of work is already active: use its manager');
    const tenant = tenantId ?? this.tenantId;
    // Inlined into the opening statement (a simple query takes no parameters): only a UUID may go there.
    if (!UUID_PATTERN.test(tenant)) throw new Error('A unit of work needs a tenant UUID');
    // At most tenantMaxConnections units of work of one tenant hold connections at once (one kept for reads).
    const place = this.gate.enter(tenant, !!options.readOnly);
    const leave = typeof place === 'function' ? place : await place;
    try {
      return await this.attempts(work, tenant, !!options.readOnly);
    } finally {
      leave();
    }
  }

  private async attempts<T>(work: (manager: EntityManager) => Promise<T>, tenant: string, readOnly: boolean): Promise<T> {
    let locking = false;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(work, tenant, readOnly, locking);
      } catch (err) {
        // An optimistic write lost a race: run again at once, locking first (the answer is then exact).
        // Not counted as an attempt: the deadlock retries stay as many.
        if (err instanceof LostRace && !locking) {
          locking = true;
          attempt--;
          this.logger.debug(`unit of work retried with locks: ${err.message}`);
          continue;
        }
        const code = AppError.sqlState(err);
        if (!code || !RETRYABLE_SQLSTATES.has(code) || attempt >= MAX_ATTEMPTS) throw err;
        this.logger.warn(`unit of work retried after SQLSTATE ${code} (attempt ${attempt})`);
        await new Promise((r) => setTimeout(r, 5 * attempt + Math.random() * 20 * attempt));
      }
    }
  }

  private async attempt<T>(work: (manager: EntityManager) => Promise<T>, tenant: string, readOnly: boolean, locking: boolean): Promise<T> {
    if (!this.dataSource.isInitialized || (this.connector && !this.connector.ready)) throw new AppError(503, 'service_unavailable', 'The database is not reachable yet; retry shortly');
    const runner = this.dataSource.createQueryRunner();
    let opened: Promise<unknown> | undefined;
    // The COMMIT once written: behind the work's last statement (commitWith) or after the work.
    let commitSent: Promise<{ command?: string }> | undefined;
    let released = false;
    let deadline: NodeJS.Timeout | undefined;
    let abort: (() => void) | undefined;
    let timedOut = false;
    let current: Attempt | undefined;
    try {
      const client = (await runner.connect()) as PgClient;
      // Whatever the database does (slow, locked, frozen, gone), a unit of work ends by its deadline: the
      // connection is dropped, so the statement in flight fails (503) and the server rolls back.
      abort = () => ((timedOut = true), client.connection.stream.destroy());
      deadline = setTimeout(abort, this.requestTimeoutMs);
      this.running.add(abort);
      /** Whether a statement sent now can reach the server: not past the deadline, the connection whole. */
      const usable = () => !timedOut && !runner.isReleased && !client.connection.stream.destroyed;
      // The pool's connections are pipelined (data-source.ts). The opening statement is written together
      // with the work's first statement (one system call, no round trip of its own). Safe: should the
      // opening fail after BEGIN, the transaction is aborted and every statement behind it fails (25P02)
      // until our ROLLBACK; nothing can run outside the tenant's role and setting.
      const query = client.query;
      const corked = () => corkTick(client.connection.stream);
      const early: EarlyCommit = { armed: false, started: false };
      // Whether the transaction runs statements with their generic plans (planMode): while the ones that ask
      // for it run (prepared.ts); not for the others. A change rides in the same write as the statement.
      let generic = false;
      client.query = function (this: PgClient, ...args: unknown[]) {
        const wantsGeneric = wantsGenericPlan(args[0], args[1]);
        if (readOnly || early.readAhead) {
          // A read-only unit of work (and a readAhead) runs each statement in a read-only transaction of its own,
          // opened and committed in the statement's write: nothing waits for the COMMIT, and a read of one
          // statement is one write whoever calls it. Nothing is lost: in READ COMMITTED each statement takes
          // its own snapshot anyway, and a read-only transaction holds no locks to keep between statements.
          corked();
          const begun = query.call(client, openingStatements(tenant, wantsGeneric, true));
          begun.catch(() => undefined);
          const result = query.apply(this, args);
          const committed = query.call(client, 'COMMIT') as Promise<{ command?: string }>;
          committed.catch(() => undefined);
          if (readOnly) [early.started, opened, commitSent] = [true, begun, committed];
          else early.readAhead = false;
          // A read ahead whose opening failed fails with that error (its statement's is only 25P02); a read-only
          // unit's attempt reports it from `opened` (attemptError), which a read ahead must leave unset.
          return readOnly ? result : begun.then(() => result, (err: unknown) => (result.catch(() => undefined), Promise.reject(err)));
        }
        if (commitSent) throw new Error('A statement after the unit of work sent its COMMIT (commitWith must wrap the last statement)');
        if (!opened) {
          early.started = true;
          corked();
          generic = wantsGeneric;
          opened = query.call(client, openingStatements(tenant, generic, false));
          opened.catch(() => undefined);
        } else if (wantsGeneric !== generic) {
          corked();
          generic = wantsGeneric;
          // Its failure (an aborted transaction) is the statement behind it's failure too.
          query.call(client, planMode(generic)).catch(() => undefined);
        }
        if (!early.armed) return query.apply(this, args);
        early.armed = false;
        corked();
        const result = query.apply(this, args);
        commitSent = query.call(client, 'COMMIT') as Promise<{ command?: string }>;
        commitSent.catch(() => undefined);
        return result;
      };
      // TypeORM's own features that need a transaction (pessimistic locks) look at this flag.
      (runner as { isTransactionActive: boolean }).isTransactionActive = true;
      // Statements of this unit of work go to the connection as TypeORM would send them, without its
      // per-statement wrapping (a second connect, the query-event broadcasts nobody listens to here, and
      // their promises: a fifth of a key read's JavaScript).
      runner.query = leanQuery(runner, client);
      const attempt: Attempt = (current = { manager: runner.manager, failure: undefined, early, keepOpen: 0, locking, usable });
      this.cls.set(ATTEMPT, attempt);
      let result: T;
      try {
        result = await work(runner.manager);
      } finally {
        client.query = query;
        attempt.early = undefined;
      }
      if (!opened) {
        // the work sent no statement: there is no transaction to end
        attempt.outcome?.settle(new Error('The unit of work committed nothing'));
        return result;
      }
      if (readOnly) {
        // Every statement's transaction was committed with it (above); the connection's next user queues
        // behind the last COMMIT, and a broken connection fails that user's statements instead.
        commitSent?.catch((err: unknown) => this.logger.warn(`COMMIT of a read-only unit of work failed: ${String(err)}`));
        released = true;
        await runner.release().catch(() => undefined);
        attempt.outcome?.settle(undefined);
        return result;
      }
      await opened;
      // A step that may have written part of its changes failed: whatever the caller did with its
      // error, the unit of work must not commit (all or nothing, CONTRACT §5 invariant 5). commitWith
      // does not send COMMIT once a failure is recorded, and nothing is recorded after it.
      if (attempt.failure !== undefined) throw attempt.failure;
      opened = undefined;
      commitSent ??= query.call(client, 'COMMIT') as Promise<{ command?: string }>;
      // COMMIT of a transaction that an error aborted answers ROLLBACK: never report that as success.
      const { command } = await commitSent;
      if (command !== 'COMMIT') throw new Error(`COMMIT answered ${command}`);
      attempt.outcome?.settle(undefined);
      return result;
    } catch (caught) {
      const err = await attemptError(caught, { commitSent, checkDoubt: !!commitSent && !readOnly, timedOut, opened, runner }, this.requestTimeoutMs);
      // What was done on this transaction's behalf learns what the server did: a COMMIT that answered COMMIT
      // kept the work's statements, whatever failed after it on this side.
      const reply = current?.outcome && commitSent && !readOnly ? await commitSent.then((r) => r, (e: unknown) => e) : undefined;
      current?.outcome?.settle(reply && !(reply instanceof Error) && (reply as { command?: string }).command === 'COMMIT' ? undefined : err);
      throw err;
    } finally {
      clearTimeout(deadline);
      if (abort) this.running.delete(abort);
      this.cls.set(ATTEMPT, undefined);
      if (!released) await runner.release().catch(() => undefined);
    }
  }
}

