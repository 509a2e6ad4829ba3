import { Injectable } from '@nestjs/common';
import { ThrottlerGuard } from '@nestjs/throttler';
import { ClsServiceManager } from 'nestjs-cls';
import { AppError } from '../common/errors';
import { Principal } from '../tenancy/request-context';

/** Per-tenant rate limit (RATE_LIMIT_PER_MINUTE); runs after the AccessGuard has set the principal. */
@Injectable()
export class TenantThrottlerGuard extends ThrottlerGuard {
  protected async getTracker(req: Record<string, any>): Promise<string> {
    const principal = ClsServiceManager.getClsService().get<Principal | undefined>('principal');
    return principal ? `tenant:${principal.tenantId}` : `ip:${req.ip}`;
  }

  protected async throwThrottlingException(): Promise<void> {
    throw new AppError(429, 'rate_limited', 'Rate limit exceeded; retry after the time in Retry-After');
  }
}
