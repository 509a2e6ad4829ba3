import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { HttpRequest, HttpResponse } from '../http/platform';
import { ClsService } from 'nestjs-cls';
import { from, lastValueFrom, Observable } from 'rxjs';
import { IdempotencyFailures } from '../common/idempotency.interceptor';
import { setETag } from '../common/versioning';
import { UnitOfWork } from '../database/unit-of-work';
import { Principal } from './request-context';
import { TenantProvisioner } from './tenant-provisioner';

/**
 * Runs every authenticated request as one unit of work: the tenant is provisioned if new, then the
 * handler (with its pipes and the interceptors inside this one: Idempotency-Key) runs inside one
 * transaction bound to the tenant. A retried unit of work (deadlock, serialization failure) runs the handler
 * again from the start. Around it, in the same plain async function (one interceptor layer instead of
 * three): a single versioned record's `ETag`, and, once a failed request has rolled back, its error
 * response stored under its Idempotency-Key (IdempotencyFailures).
 */
@Injectable()
export class UnitOfWorkInterceptor implements NestInterceptor {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly provisioner: TenantProvisioner,
    private readonly cls: ClsService,
    private readonly failures: IdempotencyFailures,
  ) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    const principal = this.cls.get<Principal | undefined>('principal');
    if (!principal) return next.handle(); // @Public routes manage their own database access
    const http = ctx.switchToHttp();
    return from(this.run(principal, next, http.getRequest<HttpRequest>(), http.getResponse<HttpResponse>()));
  }

  private async run(principal: Principal, next: CallHandler, req: HttpRequest, reply: HttpResponse): Promise<unknown> {
    try {
      const provisioning = this.provisioner.ensure(principal.tenantId);
      if (provisioning) await provisioning;
      // GET reads: a read-only transaction whose COMMIT is not waited for (UnitOfWork.run).
      const body = await this.uow.run(() => lastValueFrom(next.handle(), { defaultValue: undefined }), undefined, { readOnly: req.method === 'GET' });
      setETag(reply, body);
      return body;
    } catch (err) {
      await this.failures.store(err);
      throw err;
    }
  }
}
