import { createHmac, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { TestIdp } from './idp';

interface Jwks {
  keys: [Record<string, string>];
}

function parts(token: string): [string, string, string] {
  const [h = '', p = '', s = ''] = token.split('.');
  return [h, p, s];
}

function decode(token: string): { header: Record<string, unknown>; claims: Record<string, unknown>; signature: string } {
  const [h, p, signature] = parts(token);
  const parse = (s: string) => JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as Record<string, unknown>;
  return { header: parse(h), claims: parse(p), signature };
}

function verifyRs256(token: string, key: KeyObject): boolean {
  const [h, p, s] = parts(token);
  return verify('sha256', Buffer.from(`${h}.${p}`), key, Buffer.from(s, 'base64url'));
}

describe('TestIdp', () => {
  let idp: TestIdp;
  let jwks: Jwks;
  let publicKey: KeyObject;
  const now = () => Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    idp = await TestIdp.start();
    const res = await fetch(idp.jwksUri);
    expect(res.status).toBe(200);
    jwks = (await res.json()) as Jwks;
    publicKey = createPublicKey({ key: jwks.keys[0], format: 'jwk' });
  });

  afterAll(() => idp.stop());

  it('serves the public key as JWKS and counts requests', async () => {
    expect(idp.issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(idp.jwksUri).toBe(`${idp.issuer}.well-known/jwks.json`);
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', kid: idp.kid, alg: 'RS256', use: 'sig' });
    expect(jwks.keys[0]).not.toHaveProperty('d');
    expect(idp.jwksRequests).toBe(1);
    expect((await fetch(`${idp.issuer}nope`)).status).toBe(404);
  });

  it('issues RS256 tokens that verify against the JWKS and carry the claims', async () => {
    const tenantId = '7f1c2b1e-3a4d-4c5e-9f60-123456789abc';
    const token = await idp.token({ tenantId, permissions: ['inventory:read'], scope: 'openid' });
    expect(verifyRs256(token, publicKey)).toBe(true);

    const { header, claims } = decode(token);
    expect(header).toEqual({ alg: 'RS256', typ: 'JWT', kid: idp.kid });
    expect(claims).toMatchObject({
      iss: idp.issuer,
      aud: 'https://inventory.test/api',
      scope: 'openid',
      'https://inventory.test/tenant_id': tenantId,
      'https://inventory.test/permissions': ['inventory:read'],
    });
    expect(claims.sub).toMatch(/^user-/);
    expect(claims.exp).toBe((claims.iat as number) + 300);
  });

  it('defaults to a random tenant UUID and omits claims set to null', async () => {
    const dflt = decode(await idp.token({})).claims;
    expect(dflt['https://inventory.test/tenant_id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(dflt['https://inventory.test/permissions']).toEqual([]);

    const bare = decode(await idp.token({ tenantId: null, permissions: null })).claims;
    expect(bare).not.toHaveProperty(['https://inventory.test/tenant_id']);
    expect(bare).not.toHaveProperty(['https://inventory.test/permissions']);
  });

  it('issues expired tokens and tokens without exp', async () => {
    const expired = decode(await idp.token({ expiresInSeconds: -60 })).claims;
    expect(expired.exp as number).toBeLessThan(now());
    expect(expired.iat as number).toBeLessThan(expired.exp as number);

    expect(decode(await idp.token({ noExp: true })).claims).not.toHaveProperty('exp');
  });

  it('builds the attack tokens', async () => {
    const none = idp.algNoneToken();
    expect(decode(none)).toMatchObject({ header: { alg: 'none', typ: 'JWT' }, signature: '' });
    expect(none.endsWith('.')).toBe(true);

    const hs = await idp.hs256WithPublicKeyToken();
    const [h, p, s] = parts(hs);
    expect(decode(hs).header).toEqual({ alg: 'HS256', typ: 'JWT', kid: idp.kid });
    const pem = publicKey.export({ type: 'spki', format: 'pem' });
    expect(createHmac('sha256', pem).update(`${h}.${p}`).digest('base64url')).toBe(s);

    const other = await idp.tokenSignedByOtherKey();
    expect(decode(other).header.kid).toBe(idp.kid);
    expect(verifyRs256(other, publicKey)).toBe(false);

    expect(decode(await idp.token({ kid: 'unknown' })).header.kid).toBe('unknown');
  });
});
