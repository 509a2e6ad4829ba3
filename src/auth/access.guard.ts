import { CanActivate, ExecutionContext, Injectable, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ClsService } from 'nestjs-cls';
import { HttpRequest, notePrincipal } from '../http/platform';
import { Settings } from '../config/settings';
import { AppError } from '../common/errors';
import { Principal } from '../tenancy/request-context';
import { PERMISSIONS_KEY, PUBLIC_KEY } from './decorators';
import { JwtStrategy } from './jwt.strategy';

/**
 * The one global guard. Authenticates (JWT, or the fixed dev principal in AUTH_MODE=dev),
 * stores the principal in the request context, then checks the route's @Permissions.
 * A route that declares neither @Public nor @Permissions is refused (deny by default).
 */
@Injectable()
export class AccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly settings: Settings,
    private readonly cls: ClsService,
    /** Provided in AUTH_MODE=jwt only. */
    @Optional() private readonly jwt?: JwtStrategy,
  ) {}

  canActivate(ctx: ExecutionContext): boolean | Promise<boolean> {
    const route = this.routeOf(ctx);
    if (route.public) return true;
    // Synchronous unless a token has to be verified (not yet in the verified-token cache).
    const principal = this.authenticate(ctx);
    return principal instanceof Promise ? principal.then((p) => this.admit(ctx, route, p)) : this.admit(ctx, route, principal);
  }

  private admit(ctx: ExecutionContext, route: RouteAccess, principal: Principal): boolean {
    this.cls.set('principal', principal);
    // For the request's log line (tenant and user), written when the response has gone.
    notePrincipal(ctx.switchToHttp().getRequest<object>(), principal);
    if (!route.required.length) throw new AppError(403, 'forbidden', 'This route grants no access');
    const missing = route.required.filter((p) => !principal.permissions.has(p));
    if (missing.length) throw new AppError(403, 'forbidden', `Missing permission: ${missing.join(', ')}`);
    return true;
  }

  /** @Public and @Permissions of the route's handler (or its controller), read once per handler. */
  private routeOf(ctx: ExecutionContext): RouteAccess {
    const handler = ctx.getHandler();
    const controller = ctx.getClass();
    let byHandler = this.routes.get(controller);
    if (!byHandler) this.routes.set(controller, (byHandler = new WeakMap()));
    let route = byHandler.get(handler);
    if (!route) {
      const targets = [handler, controller];
      route = {
        public: !!this.reflector.getAllAndOverride<boolean>(PUBLIC_KEY, targets),
        required: this.reflector.getAllAndOverride<string[] | undefined>(PERMISSIONS_KEY, targets) ?? [],
      };
      byHandler.set(handler, route);
    }
    return route;
  }

  /** By controller, then handler (a handler a controller inherits takes the metadata of that controller). */
  private readonly routes = new WeakMap<object, WeakMap<object, RouteAccess>>();

  private authenticate(ctx: ExecutionContext): Principal | Promise<Principal> {
    if (this.settings.AUTH_MODE === 'dev') {
      return { tenantId: this.settings.DEV_TENANT_ID, userId: this.settings.DEV_USER_ID, permissions: ALL_PERMISSIONS };
    }
    if (!this.jwt) throw new Error('AUTH_MODE=jwt without a JwtStrategy');
    const http = ctx.switchToHttp();
    return this.jwt.principalOf(http.getRequest<HttpRequest>(), http.getResponse<object>());
  }
}

interface RouteAccess {
  public: boolean;
  required: string[];
}

/** Every permission of the contract (dev mode grants them all). */
export const ALL_PERMISSIONS: ReadonlySet<string> = new Set(
  ['catalog', 'inventory', 'procurement', 'sales', 'production', 'events']
    .flatMap((d) => [`${d}:read`, `${d}:write`])
    .concat('procurement:approve'),
);
