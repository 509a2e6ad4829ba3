'use strict';
// Prints an access token from the development identity provider (npm run idp), for AUTH_MODE=jwt:
//
//   npm run token -- --tenant 00000000-0000-4000-8000-000000000001 --permissions catalog:read,inventory:write
//
// Options: --tenant <uuid> (default the dev tenant), --permissions <list> (comma- or space-separated;
// default all), --sub <user> (default dev-client), --ttl <seconds> (default 3600),
// --idp <url> (default $IDP_ISSUER_URL, else http://127.0.0.1:4000/).
const { parseArgs } = require('node:util');

async function main() {
  const { values } = parseArgs({
    options: {
      tenant: { type: 'string' },
      permissions: { type: 'string' },
      sub: { type: 'string' },
      ttl: { type: 'string' },
      idp: { type: 'string' },
    },
    strict: true,
  });
  const idp = (values.idp ?? process.env.IDP_ISSUER_URL ?? 'http://127.0.0.1:4000/').replace(/\/?$/, '/');
  const body = { grant_type: 'client_credentials' };
  if (values.tenant) body.tenant_id = values.tenant;
  if (values.permissions !== undefined) body.permissions = values.permissions;
  if (values.sub) body.sub = values.sub;
  if (values.ttl) body.expires_in = Number(values.ttl);
  let res;
  try {
    res = await fetch(`${idp}oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  } catch (err) {
    throw new Error(`no identity provider at ${idp} (start it with npm run idp): ${err.cause?.code ?? err.message}`);
  }
  const answer = await res.json();
  if (!res.ok) throw new Error(`${answer.error}: ${answer.error_description}`);
  process.stdout.write(`${answer.access_token}\n`);
}

main().catch((err) => {
  process.stderr.write(`token: ${err.message}\n`);
  process.exit(1);
});
