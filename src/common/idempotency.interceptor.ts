import { CallHandler, ExecutionContext, Injectable, Logger, NestInterceptor, SetMetadata } from '@nestjs/common';
import type { HttpRequest, HttpResponse } from '../http/platform';
import { ClsService } from 'nestjs-cls';
import { concatMap, Observable, of } from 'rxjs';
import { UnitOfWork } from '../database/unit-of-work';
import { AppError } from './errors';
import { ErrorBody, toErrorBody } from './exception.filter';
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_MAX_LENGTH, requestHash, shouldStoreFailure, SHOWN_ONCE, storedAnswer } from './idempotency';
import { storedKey, storeResponse, takeKey } from './idempotency.sql';

/** The key this request took (inserted) in its unit of work, kept in the request's CLS for the failure path. */
interface TakenKey {
  tenantId: string;
  key: string;
  hash: string;
}
const TAKEN_KEY = 'idempotency.takenKey';
const REPLAYED = 'idempotency.replayed';

/** Whether this request's answer is a stored one, replayed for its Idempotency-Key (it changed nothing now). */
export const isReplay = (cls: ClsService): boolean => cls.isActive() && cls.get<boolean | undefined>(REPLAYED) === true;
const IDEMPOTENCY_HEADER_LOWER = IDEMPOTENCY_HEADER.toLowerCase();

/** Fields of the route's answer (`data.<field>`) shown once: never stored under an Idempotency-Key, so not in a replay (storedAnswer). */
export const ShownOnce = (...fields: string[]): MethodDecorator => SetMetadata(SHOWN_ONCE, fields);

/**
 * `Idempotency-Key` on POST (CONTRACT.md §1). Runs inside the request's unit of work (registered after
 * UnitOfWorkInterceptor), so the key row, the effect and the stored response commit together:
 * - the key's INSERT is the gate: a concurrent request with the same key waits on the row until the
 *   first commits, then finds it and replays the stored response;
 * - a request that fails rolls back, key included; IdempotencyFailures (called by UnitOfWorkInterceptor)
 *   then stores its error response under the key in a transaction of its own;
 * - a row older than 24 h is taken over by the same statement, so an expired key counts as new;
 * - the response's UPDATE leaves with the COMMIT (UnitOfWork.finishWith): with the key, an adjustment is 3 writes.
 * Responses are stored as `json` (the exact text sent), so a replay is byte for byte the original.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly cls: ClsService,
  ) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> | Promise<Observable<unknown>> {
    const req = ctx.switchToHttp().getRequest<HttpRequest>();
    const key = req.headers[IDEMPOTENCY_HEADER_LOWER];
    if (req.method !== 'POST' || key === undefined || !this.cls.get('principal')) return next.handle();
    return this.keyed(ctx, next, req, key);
  }

  private async keyed(ctx: ExecutionContext, next: CallHandler, req: HttpRequest, key: string | string[]): Promise<Observable<unknown>> {
    // A retried unit of work runs this again: only the attempt that took the key may store a failure.
    this.cls.set(TAKEN_KEY, undefined);
    this.cls.set(REPLAYED, false);
    if (typeof key !== 'string' || key.length < 1 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
      const message = `must be 1..${IDEMPOTENCY_KEY_MAX_LENGTH} characters`;
      throw new AppError(400, 'validation_failed', `${IDEMPOTENCY_HEADER} ${message}`, [{ field: IDEMPOTENCY_HEADER, message }]);
    }

    const manager = this.uow.manager;
    const tenantId = this.uow.tenantId;
    const hash = requestHash(req.method, req.originalUrl, req.body);
    const taken = await takeKey(manager, { tenantId, key, hash });
    const res = ctx.switchToHttp().getResponse<HttpResponse>();

    if (!taken) {
      const stored = await storedKey(manager, tenantId, key);
      if (stored && stored.request_hash !== hash) {
        throw new AppError(409, 'idempotency_conflict', `${IDEMPOTENCY_HEADER} was already used with a different request`);
      }
      // Not visible or without a response only if it changed under us (expiry race): ask for a retry.
      if (!stored || stored.status_code === null) {
        throw new AppError(409, 'idempotency_conflict', `A request with this ${IDEMPOTENCY_HEADER} is in progress; retry`);
      }
      res.header('Idempotent-Replayed', 'true');
      this.cls.set(REPLAYED, true);
      if (stored.status_code >= 400) {
        // Rendered again by the exception filter: toErrorBody gives every error the same field order, so
        // an AppError rebuilt from the stored body renders the same bytes with the same status.
        const body = stored.response as ErrorBody;
        throw new AppError(stored.status_code, body.error, body.message, body.details);
      }
      res.status(stored.status_code);
      return of(stored.response ?? undefined);
    }

    this.cls.set<TakenKey>(TAKEN_KEY, { tenantId, key, hash });
    // The response is stored after the handler, in this unit of work: the handler's last statement does not
    // take the COMMIT with it (keepOpen); the response's UPDATE does (finishWith).
    this.uow.keepOpen();
    return next.handle().pipe(
      concatMap(async (body) => {
        // JSON.stringify is what Express and Fastify send (Dates as ISO strings), stored unparsed in a `json` column,
        // without the fields the route shows once (ShownOnce).
        const text = storedAnswer(body, Reflect.getMetadata(SHOWN_ONCE, ctx.getHandler()) as string[] | undefined);
        await this.uow.finishWith(() => storeResponse(manager, tenantId, key, res.statusCode, text));
        return body;
      }),
    );
  }
}

/**
 * Stores the error response of a keyed request that failed (see shouldStoreFailure), so a repeat replays
 * it instead of executing again. UnitOfWorkInterceptor calls it once the request's transaction (and the
 * key row in it) has rolled back; it stores in a short transaction of its own, and the caller rethrows the
 * original error, so the response is unchanged. 5xx are not stored.
 *
 * Interleavings: a concurrent duplicate waiting on the in-flight key row sees it vanish at the rollback,
 * takes the key itself and executes (acceptable: the first did not change anything). The INSERT here
 * leaves a live row alone: if that duplicate (or any request) has stored the key meanwhile, theirs is
 * kept; if it is still in flight, this INSERT waits for it to commit or roll back. If storing fails, the
 * original error is still returned and a repeat executes again.
 */
@Injectable()
export class IdempotencyFailures {
  private readonly logger = new Logger(IdempotencyFailures.name);

  constructor(
    private readonly uow: UnitOfWork,
    private readonly cls: ClsService,
  ) {}

  async store(err: unknown): Promise<void> {
    const taken = this.cls.isActive() ? this.cls.get<TakenKey | undefined>(TAKEN_KEY) : undefined;
    if (!taken) return;
    const body = toErrorBody(err);
    if (!shouldStoreFailure(body.status, body.error)) return;
    try {
      await this.uow.run((manager) => takeKey(manager, { ...taken, status: body.status, response: JSON.stringify(body) }), taken.tenantId);
    } catch (storeErr) {
      this.logger.warn({ err: storeErr }, `could not store the ${body.status} response of a request with an ${IDEMPOTENCY_HEADER}`);
    }
  }
}
