import { AppError } from '../common/errors';
import { APP_ROLE } from './constants';
import { NamedPlaceholdersNotSupportedError, QueryFailedError, QueryResult, QueryRunner, QueryRunnerAlreadyReleasedError, EntityManager } from 'typeorm';

// A unit of work's attempt (unit-of-work.ts): its state in the request context and what it does with its connection.

/**
 * Transaction-local settings for the statements that follow: generic plans, built as nested loops over
 * key look-ups (`prepared(text, GENERIC)`: without parameter values the planner guesses 10 rows for an
 * `unnest($n)` and may hash-join a whole small table instead), or back to the session's own settings.
 */
export const planMode = (generic: boolean) =>
  generic
    ? `SET LOCAL plan_cache_mode = force_generic_plan; SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off`
    : `SET LOCAL plan_cache_mode TO DEFAULT; SET LOCAL enable_hashjoin TO DEFAULT; SET LOCAL enable_mergejoin TO DEFAULT`;

/**
 * What opens a unit of work's transaction for `tenant` (a UUID: it is inlined, a simple query takes no
 * parameters): the RLS-bound role and the tenant's setting, both transaction-local, and the plan mode. SET
 * commands, not a SELECT of set_config(): they answer without a row (nothing to describe and parse).
 */
export const openingStatements = (tenant: string, generic: boolean, readOnly: boolean) =>
  `BEGIN${readOnly ? ' READ ONLY' : ''}; SET LOCAL ROLE ${APP_ROLE}; SET LOCAL app.tenant_id = '${tenant}'${generic ? `; ${planMode(true)}` : ''}`;

/** Everything sent on `stream` in this tick leaves in one write (node-postgres's own cork/uncork nest inside). */
export function corkTick(stream: { cork(): void; uncork(): void }): void {
  stream.cork();
  process.nextTick(() => stream.uncork());
}

/** A route's `<resource>.<created|updated>` event (events/resource-events.ts). */
export interface ResourceEventKind {
  type: string;
  subjectType: string;
  action: string;
}

/** Set by commitWith for the next statement sent: COMMIT goes out right behind it. */
export interface EarlyCommit {
  armed: boolean;
  /** A statement was sent in this attempt. */
  started: boolean;
  /** Set by readAhead for the next statement sent: it runs in a read-only transaction of its own. */
  readAhead?: boolean;
}
/** The running attempt of a unit of work, in the request's context (a symbol key: read without parsing a path). */
export const ATTEMPT = Symbol('unit of work attempt');
export interface Attempt {
  manager: EntityManager;
  /** What made a step fail (`fail`): the attempt rolls back whatever its caller did with the error. */
  failure: unknown;
  /** Until the work returns: commitWith's flag for the next statement. */
  early?: EarlyCommit;
  /** How many callers declared statements after the handler (`keepOpen`) and have not finished yet. */
  keepOpen: number;
  /** The resource event that one of them writes after the handler, unless the handler took it over (`takeResourceEvent`). */
  resourceEvent?: { kind: ResourceEventKind; taken: boolean };
  /** A run after a LostRace: counters are locked before they are written (`optimistic` false). */
  locking: boolean;
  /** Asked for by `committed()`: settled when the attempt ends. */
  outcome?: Outcome;
  /** See `UnitOfWork.usable`. */
  usable(): boolean;
}
export interface Outcome {
  promise: Promise<void>;
  /** undefined: committed; anything else: what the attempt failed with. */
  settle(err: unknown): void;
}

/**
 * `QueryRunner.query` as TypeORM's PostgreSQL runner answers it — the rows (UPDATE and DELETE: `[rows,
 * count]`), or a `QueryResult` when asked for a structured one; a failure as `QueryFailedError` — sent
 * straight to the unit of work's connection. TypeORM's version also broadcasts BeforeQuery/AfterQuery to
 * subscribers (the data source has none) and logs each statement (logging is off).
 */
export function leanQuery(runner: QueryRunner, client: PgClient): QueryRunner['query'] {
  return async function query(text: string, parameters?: unknown[], useStructuredResult = false): Promise<any> {
    if (runner.isReleased) throw new QueryRunnerAlreadyReleasedError();
    if (parameters && !Array.isArray(parameters)) throw new NamedPlaceholdersNotSupportedError();
    let raw: { rows?: unknown[]; rowCount?: number | null; command?: string } | undefined;
    try {
      raw = (await client.query(text, parameters)) as typeof raw;
    } catch (err) {
      throw new QueryFailedError(text, parameters, err as Error);
    }
    const result = new QueryResult();
    if (raw) {
      if (raw.rows) result.records = raw.rows;
      if ('rowCount' in raw) result.affected = raw.rowCount ?? undefined;
      result.raw = raw.command === 'DELETE' || raw.command === 'UPDATE' ? [raw.rows, raw.rowCount] : raw.rows;
      if (!useStructuredResult) return result.raw;
    }
    return result;
  } as QueryRunner['query'];
}

/** The node-postgres client under a TypeORM query runner (its `connect()` resolves to it). */
export interface PgClient {
  query(...args: unknown[]): Promise<unknown>;
  connection: { stream: { cork(): void; uncork(): void; destroy(): void; destroyed: boolean } };
}

/** What a failed attempt ends with (and the ROLLBACK it still needs). */
export async function attemptError(
  err: unknown,
  { commitSent, checkDoubt, timedOut, opened, runner }: { commitSent?: Promise<unknown>; checkDoubt: boolean; timedOut: boolean; opened?: Promise<unknown>; runner: QueryRunner },
  requestTimeoutMs: number,
): Promise<unknown> {
  // COMMIT was written and the server never answered it (the connection broke, or the deadline
  // dropped it): the server may or may not have committed, and the client must be told so.
  if (checkDoubt) {
    const reply = await commitSent!.then((r) => r, (e: unknown) => e);
    if (reply instanceof Error && !AppError.sqlState(reply)) return new AppError(503, 'service_unavailable', COMMIT_IN_DOUBT);
  }
  if (timedOut) return new AppError(503, 'service_unavailable', `The database did not finish the request within ${requestTimeoutMs} ms; retry shortly`);
  // The opening statement's own error explains everything that failed behind it.
  const openError = opened ? await opened.then(() => undefined, (e: unknown) => e) : undefined;
  // A connection that broke needs no ROLLBACK (and cannot take one): the server ends the transaction.
  // Nor does one whose COMMIT went out (it committed, or answered ROLLBACK for an aborted transaction).
  if (opened && !commitSent) await runner.query('ROLLBACK').catch(() => undefined);
  return openError ?? err;
}

/**
 * Thrown by a step that wrote rows it had read without locking them (see `UnitOfWork.optimistic`) when
 * the database refused the write because a concurrent unit of work changed them first: the unit of
 * work is rolled back and run again at once, locking first. Never reaches a client.
 */
export class LostRace extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LostRace';
  }
}

/** The answer when the connection is lost while COMMIT is in flight: its outcome cannot be known. */
export const COMMIT_IN_DOUBT =
  'The database connection was lost while the request was being committed, so it may have taken effect; retry it with the same Idempotency-Key to get its outcome';
