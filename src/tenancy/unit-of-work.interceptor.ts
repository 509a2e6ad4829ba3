import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { ClsService } from 'nestjs-cls';
import { from, lastValueFrom, Observable } from 'rxjs';
import { UnitOfWork } from '../database/unit-of-work';
import { Principal } from './request-context';
import { TenantProvisioner } from './tenant-provisioner';

/**
 * Runs every authenticated request as one unit of work: the tenant is provisioned if new, then the
 * handler (with its pipes) runs inside one transaction bound to the tenant. A retried unit of work
 * (deadlock, serialization failure) runs the handler again from the start.
 */
@Injectable()
export class UnitOfWorkInterceptor implements NestInterceptor {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly provisioner: TenantProvisioner,
    private readonly cls: ClsService,
  ) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    const principal = this.cls.get<Principal | undefined>('principal');
    if (!principal) return next.handle(); // @Public routes manage their own database access
    // GET reads: a read-only transaction whose COMMIT is not waited for (UnitOfWork.run).
    const readOnly = ctx.switchToHttp().getRequest<{ method: string }>().method === 'GET';
    return from(
      this.provisioner
        .ensure(principal.tenantId)
        .then(() => this.uow.run(() => lastValueFrom(next.handle(), { defaultValue: undefined }), undefined, { readOnly })),
    );
  }
}
