import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ClsService } from 'nestjs-cls';
import { concatMap, Observable, of } from 'rxjs';
import { UnitOfWork } from '../database/unit-of-work';
import { AppError } from './errors';
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_TTL_HOURS, requestHash } from './idempotency';

interface StoredKey {
  request_hash: string;
  status_code: number | null;
  response: unknown;
}

/**
 * `Idempotency-Key` on POST (CONTRACT.md §1). Runs inside the request's unit of work (registered after
 * UnitOfWorkInterceptor), so the key row, the effect and the stored response commit together:
 * - the key's INSERT is the gate: a concurrent request with the same key waits on the row until the
 *   first commits, then finds it and replays the stored response;
 * - a request that fails rolls back, key included, so a retry of it executes again (nothing is stored
 *   for failures);
 * - rows older than 24 h are deleted before the INSERT, so an expired key counts as new.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly cls: ClsService,
  ) {}

  async intercept(ctx: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const req = ctx.switchToHttp().getRequest<Request>();
    const key = req.headers[IDEMPOTENCY_HEADER.toLowerCase()];
    if (req.method !== 'POST' || key === undefined || !this.cls.get('principal')) return next.handle();
    if (typeof key !== 'string' || key.length < 1 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
      const message = `must be 1..${IDEMPOTENCY_KEY_MAX_LENGTH} characters`;
      throw new AppError(400, 'validation_failed', `${IDEMPOTENCY_HEADER} ${message}`, [{ field: IDEMPOTENCY_HEADER, message }]);
    }

    const manager = this.uow.manager;
    const tenantId = this.uow.tenantId;
    const hash = requestHash(req.method, req.originalUrl, req.body);
    await manager.query(
      `DELETE FROM idempotency_keys WHERE tenant_id = $1 AND key = $2 AND created_at < now() - make_interval(hours => $3)`,
      [tenantId, key, IDEMPOTENCY_TTL_HOURS],
    );
    const inserted: unknown[] = await manager.query(
      `INSERT INTO idempotency_keys (tenant_id, key, request_hash) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING key`,
      [tenantId, key, hash],
    );
    const res = ctx.switchToHttp().getResponse<Response>();

    if (!inserted.length) {
      const [stored]: (StoredKey | undefined)[] = await manager.query(
        `SELECT request_hash, status_code, response FROM idempotency_keys WHERE tenant_id = $1 AND key = $2`,
        [tenantId, key],
      );
      if (stored && stored.request_hash !== hash) {
        throw new AppError(409, 'idempotency_conflict', `${IDEMPOTENCY_HEADER} was already used with a different request`);
      }
      // Not visible or without a response only if it changed under us (expiry race): ask for a retry.
      if (!stored || stored.status_code === null) {
        throw new AppError(409, 'idempotency_conflict', `A request with this ${IDEMPOTENCY_HEADER} is in progress; retry`);
      }
      res.status(stored.status_code).setHeader('Idempotent-Replayed', 'true');
      return of(stored.response ?? undefined);
    }

    return next.handle().pipe(
      concatMap(async (body) => {
        await manager.query(
          `UPDATE idempotency_keys SET status_code = $3, response = $4::jsonb WHERE tenant_id = $1 AND key = $2`,
          [tenantId, key, res.statusCode, JSON.stringify(body ?? null)],
        );
        return body;
      }),
    );
  }
}
