import { ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerLimitDetail } from '@nestjs/throttler';
import { ClsServiceManager } from 'nestjs-cls';
import { AppError } from '../common/errors';
import { Principal } from '../tenancy/request-context';

/**
 * Per-tenant rate limit (RATE_LIMIT_PER_MINUTE) over all of the tenant's requests; runs after the
 * AccessGuard has set the principal. Public routes (health) are not limited. Counters are in-process.
 */
@Injectable()
export class TenantThrottlerGuard extends ThrottlerGuard {
  private principal(): Principal | undefined {
    return ClsServiceManager.getClsService().get<Principal | undefined>('principal');
  }

  protected async shouldSkip(): Promise<boolean> {
    return !this.principal();
  }

  protected async getTracker(): Promise<string> {
    return `tenant:${this.principal()?.tenantId}`;
  }

  /** One counter per tenant (the default key is per route handler, which would multiply the limit). */
  protected generateKey(_ctx: ExecutionContext, tracker: string, throttler: string): string {
    return `${throttler}:${tracker}`;
  }

  protected async throwThrottlingException(_ctx: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    throw Object.assign(new AppError(429, 'rate_limited', 'Rate limit exceeded; retry after the time in Retry-After'), {
      retryAfter: Math.max(1, Math.ceil(detail.timeToBlockExpire)),
    });
  }
}
