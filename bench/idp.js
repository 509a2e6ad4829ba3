'use strict';
// The benchmark's identity provider: the development one (scripts/dev-idp.js) in-process, with a fresh
// key per run, on a free loopback port. The service verifies its tokens exactly as in production
// (AUTH_MODE=jwt: passport-jwt + jwks-rsa fetching its JWKS).
const { createIdp } = require('../scripts/dev-idp');

/** Starts the IdP; `token({tenantId, permissions, sub?, ttlSeconds?})` mints an RS256 access token. */
function startIdp({ audience = 'https://inventory.bench/api', claimNamespace = 'https://inventory.bench/' } = {}) {
  return createIdp({ audience, claimNamespace });
}

module.exports = { startIdp };
