import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { HttpRequest, HttpResponse } from '../http/platform';
import { ClsService } from 'nestjs-cls';
import { from, lastValueFrom, Observable } from 'rxjs';
import { IdempotencyFailures, isReplay } from '../common/idempotency.interceptor';
import { setETag } from '../common/versioning';
import { UnitOfWork } from '../database/unit-of-work';
import { insertEvent } from '../events/events.sql';
import { resourceEventOf, ResourceEventKind } from '../events/resource-events';
import { Principal } from './request-context';
import { TenantProvisioner } from './tenant-provisioner';

/**
 * Runs every authenticated request as one unit of work: the tenant is provisioned if new, then the
 * handler (with its pipes and the interceptors inside this one: Idempotency-Key) runs inside one
 * transaction bound to the tenant. A retried unit of work (deadlock, serialization failure) runs the handler
 * again from the start. Around it, in the same plain async function (one interceptor layer instead of
 * three): a single versioned record's `ETag`, and, once a failed request has rolled back, its error
 * response stored under its Idempotency-Key (IdempotencyFailures).
 *
 * The resource events: a POST or PATCH route that answers with a resource (resourceEventOf) writes its
 * `<resource>.<created|updated>` event — data: the record it answers with, which is the record as its
 * GET returns it — in the same unit of work, as its last statement, sent with the COMMIT (keepOpen /
 * finishWith). A request that fails rolls back and so writes none. No handler has to remember it (one may
 * take it over, to write it in its own last statement: UnitOfWork.takeResourceEvent).
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
    const req = http.getRequest<HttpRequest>();
    const event = resourceEventOf(req.method, ctx.getHandler(), ctx.getClass());
    return from(this.run(principal, next, req, http.getResponse<HttpResponse>(), event));
  }

  private async run(principal: Principal, next: CallHandler, req: HttpRequest, reply: HttpResponse, event: ResourceEventKind | null): Promise<unknown> {
    try {
      const provisioning = this.provisioner.ensure(principal.tenantId);
      if (provisioning) await provisioning;
      const handle = () => lastValueFrom(next.handle(), { defaultValue: undefined });
      // GET reads: a read-only transaction whose COMMIT is not waited for (UnitOfWork.run).
      const body = await this.uow.run(event ? () => this.withEvent(event, handle) : handle, undefined, { readOnly: req.method === 'GET' });
      setETag(reply, body);
      return body;
    } catch (err) {
      await this.failures.store(err);
      throw err;
    }
  }

  /** The handler, then its resource event as the unit of work's last statement (sent with the COMMIT). */
  private async withEvent(event: ResourceEventKind, handle: () => Promise<unknown>): Promise<unknown> {
    this.uow.keepOpen(event);
    const body = await handle();
    // The handler's own last statement wrote it (a new reservation the direct way: DirectHolds).
    if (this.uow.resourceEventTaken) return body;
    const record = (body as { data?: { id?: unknown } } | undefined)?.data;
    // A replayed Idempotency-Key answer changed nothing now: no event (the first run wrote it). Asked of the
    // request context, not of the response's headers: Fastify keeps a reply's headers off the Node response
    // until it sends them.
    if (!record || typeof record.id !== 'string' || isReplay(this.cls)) return body;
    const tenantId = this.uow.tenantId;
    await this.uow.finishWith(() =>
      insertEvent(this.uow.manager, tenantId, { ...event, subjectId: record.id as string, data: JSON.stringify(record) }),
    );
    return body;
  }
}
