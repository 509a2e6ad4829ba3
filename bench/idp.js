'use strict';
// A loopback identity provider for the benchmark: an RS256 key pair, its JWKS served over HTTP on
// 127.0.0.1, and real signed access tokens. The service verifies them exactly as in production
// (AUTH_MODE=jwt: passport-jwt + jwks-rsa fetching this JWKS). Plain JS port of test/support/idp.ts.
const { createHash, generateKeyPair, randomUUID, sign } = require('node:crypto');
const { createServer } = require('node:http');
const { promisify } = require('node:util');

const JWKS_PATH = '/.well-known/jwks.json';
const b64url = (value) => Buffer.from(value).toString('base64url');
const segment = (value) => b64url(JSON.stringify(value));

/** Starts the IdP; `issuer` ends with a slash, so the service's default JWKS address (issuer + ".well-known/jwks.json") works. */
async function startIdp({ audience = 'https://inventory.bench/api', claimNamespace = 'https://inventory.bench/' } = {}) {
  const { publicKey, privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  const jwk = publicKey.export({ format: 'jwk' });
  // RFC 7638 thumbprint as the key id.
  const kid = createHash('sha256').update(JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n })).digest('base64url');
  const jwks = JSON.stringify({ keys: [{ ...jwk, kid, alg: 'RS256', use: 'sig' }] });
  let jwksRequests = 0;

  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === JWKS_PATH) {
      jwksRequests++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(jwks);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const issuer = `http://127.0.0.1:${server.address().port}/`;

  return {
    issuer,
    audience,
    claimNamespace,
    get jwksRequests() {
      return jwksRequests;
    },
    /** An RS256 access token for `tenantId` with `permissions`, valid for `ttlSeconds`. */
    token({ tenantId, permissions, sub = `bench-${randomUUID()}`, ttlSeconds = 3600 }) {
      const now = Math.floor(Date.now() / 1000);
      const claims = {
        iss: issuer,
        aud: audience,
        sub,
        iat: now,
        exp: now + ttlSeconds,
        [`${claimNamespace}tenant_id`]: tenantId,
        [`${claimNamespace}permissions`]: permissions,
      };
      const input = `${segment({ alg: 'RS256', typ: 'JWT', kid })}.${segment(claims)}`;
      return `${input}.${b64url(sign('sha256', Buffer.from(input), privateKey))}`;
    },
    stop: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // jwks-rsa keeps its socket alive
      }),
  };
}

module.exports = { startIdp };
