import { Injectable, Logger } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { HttpRequest as Request } from '../http/platform';
import passport from 'passport';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { Settings } from '../config/settings';
import { AppError } from '../common/errors';
import { JwksClient } from 'jwks-rsa';
import { Principal } from '../tenancy/request-context';
import { principalFromClaims } from './claims';
import { SigningKeys } from './signing-keys';
import { VerifiedTokens } from './verified-tokens';

const unauthorized = (message: string) => new AppError(401, 'unauthorized', message);

/** Errors of jsonwebtoken: their messages say what is wrong with the token and nothing about the service. */
const TOKEN_ERRORS = new Set(['JsonWebTokenError', 'TokenExpiredError', 'NotBeforeError']);

export { principalFromClaims } from './claims';

/** passport-jwt's key lookup: the token header's `kid` → a cached KeyObject (none: the token is refused). */
function keyProvider(keys: SigningKeys, algorithms: string[]) {
  // passport-jwt's types say string | Buffer; jsonwebtoken (which it calls) takes a KeyObject as it is.
  return (_req: unknown, rawJwt: string, done: (err: unknown, key?: string | Buffer) => void) => {
    let kid: string | undefined;
    try {
      const header = JSON.parse(Buffer.from(rawJwt.split('.')[0], 'base64url').toString('utf8')) as { kid?: unknown; alg?: unknown };
      // `alg: none`, HS* and anything not configured get no key at all (and cost no JWKS fetch).
      if (typeof header.alg !== 'string' || !algorithms.includes(header.alg)) return done(null, undefined);
      kid = typeof header.kid === 'string' ? header.kid : undefined;
    } catch {
      return done(null, undefined); // not a JWT: jsonwebtoken says so
    }
    keys.get(kid).then((key) => done(null, key as unknown as Buffer | undefined), (err: unknown) => done(err));
  };
}

/**
 * Verifies bearer tokens: signature by a key from the IdP's JWKS (KeyObjects cached per kid, see SigningKeys),
 * asymmetric algorithms only, issuer, audience, expiry with a small clock tolerance.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(private readonly settings: Settings) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      secretOrKeyProvider: keyProvider(
        new SigningKeys(new JwksClient({ jwksUri: settings.jwksUri, cache: false, rateLimit: false, timeout: 5000 })),
        settings.IDP_ALGORITHMS,
      ),
      issuer: settings.IDP_ISSUER_URL,
      audience: settings.IDP_AUDIENCE,
      algorithms: settings.IDP_ALGORITHMS as never,
      ignoreExpiration: false,
      jsonWebTokenOptions: { clockTolerance: settings.IDP_CLOCK_TOLERANCE_SECONDS },
    });
  }

  private readonly logger = new Logger('Auth');

  validate(claims: Record<string, unknown>): Principal {
    return principalFromClaims(claims, this.settings.CLAIM_NAMESPACE);
  }

  /**
   * Verifies the request's bearer token with this very instance, not with the strategy passport's global
   * registry holds under 'jwt': with several apps in one process (tests), that is the last one created.
   * passport binds its per-request callbacks onto the strategy object, hence one derived object per request.
   */
  principalOf(req: Request, res: object): Principal | Promise<Principal> {
    const auth = req.headers.authorization;
    const token = typeof auth === 'string' && auth.startsWith('Bearer ') ? auth.slice(7) : undefined;
    const cached = token ? this.verified.get(token) : undefined;
    return cached ?? this.verifyAndRemember(req, res, token);
  }

  private async verifyAndRemember(req: Request, res: object, token: string | undefined): Promise<Principal> {
    const principal = await this.verify(req, res);
    // Verified: its claims were parsed, so exp is a number (principalFromClaims requires it).
    if (token) this.verified.set(token, principal, JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')).exp);
    return principal;
  }

  /** Tokens verified recently, by their text (see VerifiedTokens). */
  private readonly verified = new VerifiedTokens<Principal>();

  private verify(req: Request, res: object): Promise<Principal> {
    return new Promise((resolve, reject) => {
      const strategy = Object.create(this) as JwtStrategy;
      passport.authenticate(strategy, { session: false }, (err: unknown, user: Principal | false, info: unknown) => {
        if (err instanceof AppError) return reject(err);
        if (err || !user) return reject(unauthorized(this.reason(info instanceof Error ? info : err instanceof Error ? err : undefined)));
        resolve(user);
      })(req, res, reject);
    });
  }

  private reason(e: Error | undefined): string {
    if (!e) return 'Invalid token';
    if (/no auth token/i.test(e.message)) return 'Missing bearer token';
    // no key for the token's kid and alg (unknown kid, alg none, HS*): jsonwebtoken only says it got no key
    if (/secret or public key must be provided/.test(e.message)) return 'Invalid token: not signed by a known key with an accepted algorithm';
    if (TOKEN_ERRORS.has(e.name)) return `Invalid token: ${e.message}`;
    // the IdP's keys could not be fetched (network, rate limit): logged, and the client is not told where the IdP is
    this.logger.warn(`token not verifiable: ${e.name}: ${e.message}`);
    return 'Invalid token: it could not be verified';
  }
}
