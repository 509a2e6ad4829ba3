/**
 * Test identity provider for e2e tests.
 *
 * Serves a real JWKS endpoint over HTTP and issues RS256 tokens, so tests go
 * through the service's production JWT path (passport-jwt + jwks-rsa).
 *
 * Built on node:crypto only: `jose` v6 is ESM-only and jest's CommonJS module
 * loader cannot `require` it on Node 20 without extra transform config.
 */
import {
  createHash,
  createHmac,
  generateKeyPair,
  randomUUID,
  sign,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';

export interface TestIdpOptions {
  /** Default 'https://inventory.test/api'. */
  audience?: string;
  /** Prefix of the custom claims. Default 'https://inventory.test/'. */
  claimNamespace?: string;
}

export interface TokenOptions {
  /** Goes into `${claimNamespace}tenant_id`. undefined => random UUID, null => claim omitted. */
  tenantId?: string | null;
  /** Goes into `${claimNamespace}permissions`. undefined => [], null => claim omitted. */
  permissions?: string[] | null;
  /** Standard `scope` claim (omitted unless given). */
  scope?: string;
  /** Default 'user-<uuid>'. */
  sub?: string;
  /** Default: this IdP's issuer. */
  issuer?: string;
  /** Default: this IdP's audience. */
  audience?: string | string[];
  /** Default 300. Negative => already expired (exp in the past, iat further back). */
  expiresInSeconds?: number;
  /** Omit `exp`. */
  noExp?: boolean;
  /** Override the `kid` header (e.g. an unknown kid). */
  kid?: string;
  /** Merged last, so it overrides anything; a value of `undefined` removes that claim. */
  extraClaims?: Record<string, unknown>;
}

interface KeyPair {
  publicKey: KeyObject;
  privateKey: KeyObject;
}

export interface PublicJwk extends JsonWebKey {
  kid: string;
  alg: 'RS256';
  use: 'sig';
}

const DEFAULT_TTL_SECONDS = 300;
const JWKS_PATH = '/.well-known/jwks.json';

const generateRsaKeyPair = (): Promise<KeyPair> =>
  promisify(generateKeyPair)('rsa', { modulusLength: 2048 });

const b64url = (value: string | Buffer): string => Buffer.from(value).toString('base64url');

const encodeSegment = (value: object): string => b64url(JSON.stringify(value));

/** RFC 7638 JWK thumbprint, used as the kid. */
const thumbprint = (jwk: JsonWebKey): string =>
  createHash('sha256')
    .update(JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n }))
    .digest('base64url');

function signRs256(header: object, claims: object, privateKey: KeyObject): string {
  const input = `${encodeSegment(header)}.${encodeSegment(claims)}`;
  return `${input}.${b64url(sign('sha256', Buffer.from(input), privateKey))}`;
}

export class TestIdp {
  readonly issuer: string;
  readonly jwksUri: string;
  readonly audience: string;
  readonly claimNamespace: string;
  /** Number of JWKS GETs served (lets tests observe jwks-rsa caching). */
  jwksRequests = 0;

  readonly kid: string;
  readonly publicJwk: PublicJwk;
  private otherKeys?: Promise<KeyPair>;

  private constructor(
    private readonly server: Server,
    private readonly keys: KeyPair,
    opts: TestIdpOptions,
  ) {
    const { port } = server.address() as AddressInfo;
    this.issuer = `http://127.0.0.1:${port}/`;
    this.jwksUri = `${this.issuer}${JWKS_PATH.slice(1)}`;
    this.audience = opts.audience ?? 'https://inventory.test/api';
    this.claimNamespace = opts.claimNamespace ?? 'https://inventory.test/';

    const jwk = keys.publicKey.export({ format: 'jwk' });
    this.kid = thumbprint(jwk);
    this.publicJwk = { ...jwk, kid: this.kid, alg: 'RS256', use: 'sig' };

    server.on('request', (req, res) => {
      if (req.method === 'GET' && req.url === JWKS_PATH) {
        this.jwksRequests++;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ keys: [this.publicJwk] }));
        return;
      }
      res.writeHead(404).end();
    });
  }

  static async start(opts: TestIdpOptions = {}): Promise<TestIdp> {
    const keys = await generateRsaKeyPair();
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return new TestIdp(server, keys, opts);
  }

  /** Claims of a valid-looking token, shaped by `o`. */
  claims(o: TokenOptions = {}): Record<string, unknown> {
    const now = Math.floor(Date.now() / 1000);
    const ttl = o.expiresInSeconds ?? DEFAULT_TTL_SECONDS;
    const exp = now + ttl;
    const claims: Record<string, unknown> = {
      iss: o.issuer ?? this.issuer,
      aud: o.audience ?? this.audience,
      sub: o.sub ?? `user-${randomUUID()}`,
      iat: ttl < 0 ? exp - DEFAULT_TTL_SECONDS : now,
    };
    if (!o.noExp) claims.exp = exp;
    if (o.tenantId !== null) claims[`${this.claimNamespace}tenant_id`] = o.tenantId ?? randomUUID();
    if (o.permissions !== null) claims[`${this.claimNamespace}permissions`] = o.permissions ?? [];
    if (o.scope !== undefined) claims.scope = o.scope;
    return { ...claims, ...o.extraClaims };
  }

  /** A valid RS256 token by default. */
  async token(o: TokenOptions = {}): Promise<string> {
    return signRs256({ alg: 'RS256', typ: 'JWT', kid: o.kid ?? this.kid }, this.claims(o), this.keys.privateKey);
  }

  /** Unsigned token (`alg: none`) with valid-looking claims and an empty signature part. */
  algNoneToken(o: TokenOptions = {}): string {
    return `${encodeSegment({ alg: 'none', typ: 'JWT' })}.${encodeSegment(this.claims(o))}.`;
  }

  /** Key-confusion attack: HS256 with the public key's PEM as HMAC secret, real kid. */
  async hs256WithPublicKeyToken(o: TokenOptions = {}): Promise<string> {
    const secret = this.keys.publicKey.export({ type: 'spki', format: 'pem' });
    const input = `${encodeSegment({ alg: 'HS256', typ: 'JWT', kid: o.kid ?? this.kid })}.${encodeSegment(this.claims(o))}`;
    return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
  }

  /** RS256 signed by a different key pair, but carrying the real kid. */
  async tokenSignedByOtherKey(o: TokenOptions = {}): Promise<string> {
    this.otherKeys ??= generateRsaKeyPair();
    const { privateKey } = await this.otherKeys;
    return signRs256({ alg: 'RS256', typ: 'JWT', kid: o.kid ?? this.kid }, this.claims(o), privateKey);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.close((err) => (err ? reject(err) : resolve()));
      this.server.closeAllConnections(); // don't wait for keep-alive sockets (jwks-rsa's agent)
    });
  }
}
