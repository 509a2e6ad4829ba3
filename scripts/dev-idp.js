'use strict';
// A development identity provider, for trying AUTH_MODE=jwt without an external one (never for
// production): an RS256 key pair, its JWKS and OpenID discovery document over HTTP, and an OAuth 2
// client-credentials token endpoint that issues access tokens with this service's claims.
//
//   npm run idp                       serve it (IDP_PORT 4000, key kept in .data/dev-idp/key.pem)
//   npm run token -- --tenant <uuid> --permissions catalog:read,inventory:write
//
// The benchmark uses the same code in-process (createIdp without a key file: a fresh key per run).
const { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, sign } = require('node:crypto');
const { existsSync, mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const { createServer } = require('node:http');
const { dirname } = require('node:path');

const JWKS_PATH = '/.well-known/jwks.json';
const DEFAULTS = {
  audience: 'https://inventory.example.com/api',
  claimNamespace: 'https://inventory.example.com/',
  tenantId: '00000000-0000-4000-8000-000000000001',
};
const ALL_PERMISSIONS = [
  'catalog:read', 'catalog:write', 'inventory:read', 'inventory:write', 'procurement:read', 'procurement:write',
  'procurement:approve', 'sales:read', 'sales:write', 'production:read', 'production:write',
];
const MAX_TTL_SECONDS = 86_400;
const MAX_BODY_BYTES = 16_384;

const b64url = (value) => Buffer.from(value).toString('base64url');
const segment = (value) => b64url(JSON.stringify(value));

/** The signing key: from `keyFile` when it exists (created there otherwise), or a new one per process. */
function signingKey(keyFile) {
  if (keyFile && existsSync(keyFile)) return createPrivateKey(readFileSync(keyFile, 'utf8'));
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  if (keyFile) {
    mkdirSync(dirname(keyFile), { recursive: true });
    writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  }
  return privateKey;
}

/**
 * Starts the identity provider on `host:port` (port 0: any free one). `publicUrl` is the issuer as the
 * service reaches it (default http://<host>:<port>/); it ends with a slash, so the service's default JWKS
 * address (issuer + ".well-known/jwks.json") works.
 */
async function createIdp({ port = 0, host = '127.0.0.1', publicUrl, keyFile, audience = DEFAULTS.audience, claimNamespace = DEFAULTS.claimNamespace } = {}) {
  const privateKey = signingKey(keyFile);
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  // RFC 7638 thumbprint as the key id: the same key keeps its kid across restarts.
  const kid = createHash('sha256').update(JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n })).digest('base64url');
  const jwks = JSON.stringify({ keys: [{ ...jwk, kid, alg: 'RS256', use: 'sig' }] });
  let jwksRequests = 0;
  let issuer = publicUrl;

  /** An RS256 access token for `tenantId` with `permissions`, valid for `ttlSeconds`. */
  function token({ tenantId = DEFAULTS.tenantId, permissions = ALL_PERMISSIONS, sub = `dev-${randomUUID()}`, ttlSeconds = 3600 } = {}) {
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: issuer, aud: audience, sub, iat: now, exp: now + ttlSeconds,
      [`${claimNamespace}tenant_id`]: tenantId,
      [`${claimNamespace}permissions`]: permissions,
    };
    const input = `${segment({ alg: 'RS256', typ: 'JWT', kid })}.${segment(claims)}`;
    return `${input}.${b64url(sign('sha256', Buffer.from(input), privateKey))}`;
  }

  const json = (res, status, body) => res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === JWKS_PATH) {
      jwksRequests++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(jwks);
    } else if (req.method === 'GET' && path === '/.well-known/openid-configuration') {
      json(res, 200, { issuer, jwks_uri: `${issuer}${JWKS_PATH.slice(1)}`, token_endpoint: `${issuer}oauth/token`, grant_types_supported: ['client_credentials'], id_token_signing_alg_values_supported: ['RS256'] });
    } else if (req.method === 'POST' && path === '/oauth/token') {
      readBody(req).then((params) => {
        if (params.grant_type !== 'client_credentials') return json(res, 400, { error: 'unsupported_grant_type', error_description: 'grant_type must be client_credentials' });
        const claims = tokenRequest(params);
        if (claims.error) return json(res, 400, { error: 'invalid_request', error_description: claims.error });
        json(res, 200, { access_token: token(claims), token_type: 'Bearer', expires_in: claims.ttlSeconds });
      }, (err) => json(res, 400, { error: 'invalid_request', error_description: err.message }));
    } else {
      json(res, 404, { error: 'not_found' });
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  issuer = issuer ?? `http://${host}:${server.address().port}/`;

  return {
    get issuer() {
      return issuer;
    },
    audience,
    claimNamespace,
    kid,
    get jwksRequests() {
      return jwksRequests;
    },
    token,
    stop: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // jwks-rsa keeps its socket alive
      }),
  };
}

/** The token request's parameters: form-encoded (OAuth 2) or JSON, at most 16 KiB. */
function readBody(req) {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => {
      body += chunk;
      if (body.length > MAX_BODY_BYTES) reject(new Error('request too large')), req.destroy();
    });
    req.on('end', () => {
      try {
        resolve((req.headers['content-type'] ?? '').includes('json') ? JSON.parse(body || '{}') : Object.fromEntries(new URLSearchParams(body)));
      } catch {
        reject(new Error('malformed body'));
      }
    });
    req.on('error', reject);
  });
}

/** tenant_id, permissions (space- or comma-separated, or `scope`), sub and expires_in of a token request. */
function tokenRequest(params) {
  const tenantId = params.tenant_id ?? DEFAULTS.tenantId;
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(String(tenantId))) return { error: 'tenant_id must be a UUID' };
  const raw = params.permissions ?? params.scope;
  const permissions = raw === undefined ? ALL_PERMISSIONS : (Array.isArray(raw) ? raw : String(raw).split(/[\s,]+/)).filter(Boolean);
  const unknown = permissions.filter((p) => !ALL_PERMISSIONS.includes(p));
  if (unknown.length) return { error: `unknown permissions: ${unknown.join(', ')} (known: ${ALL_PERMISSIONS.join(' ')})` };
  const ttlSeconds = params.expires_in === undefined ? 3600 : Number(params.expires_in);
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_TTL_SECONDS) return { error: `expires_in must be 1..${MAX_TTL_SECONDS} seconds` };
  const sub = String(params.sub ?? params.client_id ?? 'dev-client');
  if (!sub || sub.length > 200 || sub.includes('\0')) return { error: 'sub must be 1..200 characters' };
  return { tenantId, permissions, sub, ttlSeconds };
}

module.exports = { createIdp, ALL_PERMISSIONS, DEFAULTS };

if (require.main === module) {
  const port = Number(process.env.IDP_PORT ?? 4000);
  const host = process.env.IDP_HOST ?? '127.0.0.1';
  createIdp({
    port,
    host,
    // IDP_PORT=0: a port of the system's choosing, named in the issuer it prints
    publicUrl: process.env.IDP_PUBLIC_URL || (port ? `http://127.0.0.1:${port}/` : undefined),
    keyFile: process.env.IDP_KEY_FILE ?? '.data/dev-idp/key.pem',
    audience: process.env.IDP_AUDIENCE || DEFAULTS.audience,
    claimNamespace: process.env.CLAIM_NAMESPACE || DEFAULTS.claimNamespace,
  }).then(
    (idp) => {
      process.stdout.write(
        `${JSON.stringify({ msg: `development identity provider on ${idp.issuer}`, issuer: idp.issuer, audience: idp.audience, claimNamespace: idp.claimNamespace, kid: idp.kid })}\n` +
          `service settings: AUTH_MODE=jwt IDP_ISSUER_URL=${idp.issuer} IDP_AUDIENCE=${idp.audience} CLAIM_NAMESPACE=${idp.claimNamespace}\n`,
      );
      const stop = () => idp.stop().then(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    },
    (err) => {
      process.stderr.write(`development identity provider failed to start: ${err.message}\n`);
      process.exit(1);
    },
  );
}
