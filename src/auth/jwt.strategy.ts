import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { passportJwtSecret } from 'jwks-rsa';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { Settings } from '../config/settings';
import { AppError } from '../common/errors';
import { Principal } from '../tenancy/request-context';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const unauthorized = (message: string) => new AppError(401, 'unauthorized', message);

/** Turns verified claims into the principal (CONTRACT.md §3). Exported for unit tests. */
export function principalFromClaims(claims: Record<string, unknown>, namespace: string): Principal {
  if (typeof claims.exp !== 'number') throw unauthorized('Token has no expiry (exp)');
  const tenantId = claims[`${namespace}tenant_id`];
  if (typeof tenantId !== 'string' || !UUID.test(tenantId)) throw unauthorized('Token has no valid tenant_id claim');
  if (typeof claims.sub !== 'string' || !claims.sub) throw unauthorized('Token has no subject (sub)');
  const listed = claims[`${namespace}permissions`];
  const permissions = Array.isArray(listed)
    ? listed.filter((p): p is string => typeof p === 'string')
    : typeof claims.scope === 'string'
      ? claims.scope.split(' ').filter(Boolean)
      : [];
  return { tenantId: tenantId.toLowerCase(), userId: claims.sub, permissions: new Set(permissions) };
}

/**
 * Verifies bearer tokens: signature by a key from the IdP's JWKS (cached, rate limited),
 * asymmetric algorithms only, issuer, audience, expiry with a small clock tolerance.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(private readonly settings: Settings) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      secretOrKeyProvider: passportJwtSecret({
        jwksUri: settings.jwksUri,
        cache: true,
        cacheMaxEntries: 10,
        cacheMaxAge: 10 * 60 * 1000,
        rateLimit: true,
        jwksRequestsPerMinute: 10,
        timeout: 5000,
      }),
      issuer: settings.IDP_ISSUER_URL,
      audience: settings.IDP_AUDIENCE,
      algorithms: settings.IDP_ALGORITHMS as never,
      ignoreExpiration: false,
      jsonWebTokenOptions: { clockTolerance: settings.IDP_CLOCK_TOLERANCE_SECONDS },
    });
  }

  validate(claims: Record<string, unknown>): Principal {
    return principalFromClaims(claims, this.settings.CLAIM_NAMESPACE);
  }
}
