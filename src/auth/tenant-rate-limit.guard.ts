import { CanActivate, ExecutionContext, Injectable, OnModuleDestroy } from '@nestjs/common';
import { ClsService } from 'nestjs-cls';
import { AppError } from '../common/errors';
import { Settings } from '../config/settings';
import { setHeader } from '../http/platform';
import { Principal } from '../tenancy/request-context';
import { RateWindows } from './rate-windows';

const MINUTE_MS = 60_000;

/**
 * Per-tenant rate limit (RATE_LIMIT_PER_MINUTE) over all of the tenant's requests; runs after the
 * AccessGuard has set the principal. Public routes (health) are not limited. Counters are in-process
 * (RateWindows). Every limited response says `X-RateLimit-Limit`, `-Remaining` and `-Reset` (seconds until a
 * slot frees); a refused one is 429 `rate_limited` with `Retry-After`.
 *
 * Synchronous and without metadata look-ups: @nestjs/throttler's guard cost 14 promises and 7 reflection
 * look-ups per request (a tenth of a key read's promises), for options this service does not use.
 */
@Injectable()
export class TenantRateLimitGuard implements CanActivate, OnModuleDestroy {
  private readonly windows = new RateWindows();
  private readonly limit: number;

  constructor(
    private readonly cls: ClsService,
    settings: Settings,
  ) {
    this.limit = settings.RATE_LIMIT_PER_MINUTE;
  }

  onModuleDestroy(): void {
    this.windows.stop();
  }

  canActivate(ctx: ExecutionContext): boolean {
    const principal = this.cls.get<Principal | undefined>('principal');
    if (!principal) return true;
    const r = this.windows.hit(principal.tenantId, MINUTE_MS, this.limit);
    const reply = ctx.switchToHttp().getResponse<object>();
    setHeader(reply, 'X-RateLimit-Limit', this.limit);
    setHeader(reply, 'X-RateLimit-Remaining', Math.max(0, this.limit - r.totalHits));
    setHeader(reply, 'X-RateLimit-Reset', r.timeToExpire);
    if (r.isBlocked) {
      throw Object.assign(new AppError(429, 'rate_limited', 'Rate limit exceeded; retry after the time in Retry-After'), {
        retryAfter: r.timeToBlockExpire,
      });
    }
    return true;
  }
}
