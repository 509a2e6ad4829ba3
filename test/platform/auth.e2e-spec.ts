import { randomUUID } from 'node:crypto';
import type * as JwtStrategyModule from '../../src/auth/jwt.strategy';
import { fromDist } from '../support/dist';
import { newTenant, startApp, TestContext, PLATFORMS } from '../support/app';

const { principalFromClaims } = fromDist<typeof JwtStrategyModule>('auth/jwt.strategy');

const UNAUTHORIZED = { error: 'unauthorized', message: expect.any(String), status: 401 };

describe.each(PLATFORMS)('authentication and permissions (CONTRACT §3) on %s', (platform) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp({ HTTP_PLATFORM: platform });
  });
  afterAll(() => ctx.close());

  const getUoms = (authorization?: string) => {
    const req = ctx.http.get('/v1/uoms');
    return authorization === undefined ? req : req.set('Authorization', authorization);
  };
  const bearer = (token: string) => `Bearer ${token}`;

  // First, while the app's JWKS cache is cold: later tests (unknown kid) make jwks-rsa refetch.
  it('fetches the JWKS once and caches it across many requests', async () => {
    expect(ctx.idp.jwksRequests).toBe(0);
    const t = await newTenant(ctx, ['catalog:read']);
    await t.get('/v1/uoms').expect(200);
    for (let i = 0; i < 3; i++) await Promise.all(Array.from({ length: 10 }, () => t.get('/v1/uoms').expect(200)));
    const other = await newTenant(ctx, ['catalog:read']);
    await other.get('/v1/uoms').expect(200);
    expect(ctx.idp.jwksRequests).toBeGreaterThanOrEqual(1);
    expect(ctx.idp.jwksRequests).toBeLessThanOrEqual(2);
  });

  describe('refuses with 401 unauthorized', () => {
    const cases: Array<[string, (c: TestContext) => Promise<string | undefined>, RegExp | null]> = [
      ['no Authorization header', async () => undefined, /missing bearer token/i],
      ['a garbage token', async () => bearer('not.a.jwt'), null],
      ['a token that is not even dotted', async () => bearer('garbage'), null],
      ['a non-Bearer scheme carrying a valid token', async (c) => `Basic ${await c.idp.token({ permissions: ['catalog:read'] })}`, null],
      ['a token scheme without credentials', async () => 'Bearer', null],
      ['an expired token (beyond the clock tolerance)', async (c) => bearer(await c.idp.token({ permissions: ['catalog:read'], expiresInSeconds: -120 })), /expired/i],
      ['a wrong issuer', async (c) => bearer(await c.idp.token({ permissions: ['catalog:read'], issuer: 'https://evil.example.com/' })), /issuer/i],
      ['a wrong audience', async (c) => bearer(await c.idp.token({ permissions: ['catalog:read'], audience: 'https://other.example.com/api' })), /audience/i],
      ['an audience array without ours', async (c) => bearer(await c.idp.token({ permissions: ['catalog:read'], audience: ['a', 'b'] })), /audience/i],
      ['alg none', async (c) => bearer(c.idp.algNoneToken({ permissions: ['catalog:read'] })), /algorithm/],
      ['HS256 signed with the public key (key confusion)', async (c) => bearer(await c.idp.hs256WithPublicKeyToken({ permissions: ['catalog:read'] })), /not signed by a known key/],
      ['a token signed by another key with the real kid', async (c) => bearer(await c.idp.tokenSignedByOtherKey({ permissions: ['catalog:read'] })), /signature/i],
      ['an unknown kid', async (c) => bearer(await c.idp.token({ permissions: ['catalog:read'], kid: 'unknown-kid' })), /not signed by a known key/],
      ['a token without exp', async (c) => bearer(await c.idp.token({ permissions: ['catalog:read'], noExp: true })), /exp/i],
      ['a token without the tenant claim', async (c) => bearer(await c.idp.token({ permissions: ['catalog:read'], tenantId: null })), /tenant/i],
      ['a non-UUID tenant claim', async (c) => bearer(await c.idp.token({ permissions: ['catalog:read'], tenantId: 'acme' })), /tenant/i],
      ['a numeric tenant claim', async (c) => bearer(await c.idp.token({ permissions: ['catalog:read'], extraClaims: { 'https://inventory.test/tenant_id': 42 } })), /tenant/i],
      ['a token without sub', async (c) => bearer(await c.idp.token({ permissions: ['catalog:read'], extraClaims: { sub: undefined } })), /sub/i],
    ];

    it.each(cases)('%s', async (_name, authorization, message) => {
      const res = await getUoms(await authorization(ctx)).expect(401);
      expect(res.body).toEqual(UNAUTHORIZED);
      if (message) expect(res.body.message).toMatch(message);
    });

    it('when the IdP cannot be reached, without saying where it is (a second app in the process)', async () => {
      const other = await startApp({ HTTP_PLATFORM: platform });
      try {
        // concurrent first requests, all waiting for the one JWKS fetch, each answered as itself
        const tenants = await Promise.all(Array.from({ length: 8 }, () => newTenant(other, ['catalog:read', 'catalog:write'])));
        const created = await Promise.all(tenants.map((t, i) => t.post('/v1/uoms', { code: `T${i}`, name: `T${i}`, decimals: 0 })));
        expect(created.map((r) => r.status)).toEqual(Array(8).fill(201));
        for (const [i, t] of tenants.entries()) {
          const [row] = await other.db.query(`SELECT tenant_id FROM uoms WHERE id = $1`, [created[i].body.data.id]);
          expect(row.tenant_id).toBe(t.tenantId);
        }
        expect(other.idp.jwksRequests).toBe(1);
        // two apps in one process, each verifying with its own IdP
        await other.http.get('/v1/uoms').set('Authorization', bearer(await other.idp.token({ permissions: ['catalog:read'] }))).expect(200);
        await getUoms(bearer(await ctx.idp.token({ permissions: ['catalog:read'] }))).expect(200);
        await getUoms(bearer(await other.idp.token({ permissions: ['catalog:read'] }))).expect(401);

        await other.idp.stop();
        // its cached key still verifies; a new kid within 10 s of the last fetch is not fetched (CONTRACT §3)...
        await other.http.get('/v1/uoms').set('Authorization', bearer(await other.idp.token({ permissions: ['catalog:read'] }))).expect(200);
        const token = await other.idp.token({ permissions: ['catalog:read'], kid: 'rotated-key' });
        const soon = await other.http.get('/v1/uoms').set('Authorization', bearer(token)).expect(401);
        expect(soon.body).toEqual({ error: 'unauthorized', message: 'Invalid token: not signed by a known key with an accepted algorithm', status: 401 });
        // ...after that it is, and the failed fetch is answered without saying where the IdP is.
        await new Promise((resolve) => setTimeout(resolve, 10_100));
        const res = await other.http.get('/v1/uoms').set('Authorization', bearer(token)).expect(401);
        expect(res.body).toEqual({ error: 'unauthorized', message: 'Invalid token: it could not be verified', status: 401 });
      } finally {
        await other.app.close();
      }
    });

    it('also on a write, with the same body shape', async () => {
      const res = await ctx.http.post('/v1/uoms').send({ code: 'X', name: 'X', decimals: 0 }).expect(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });
  });

  it('keeps concurrent verifications apart (valid and invalid tokens in parallel)', async () => {
    const good = await ctx.idp.token({ permissions: ['catalog:read'] });
    const cases = await Promise.all(
      Array.from({ length: 30 }, async (_, i) =>
        i % 3 === 0 ? [401, 'Bearer nope'] : i % 3 === 1 ? [401, bearer(await ctx.idp.tokenSignedByOtherKey())] : [200, bearer(good)],
      ),
    );
    const statuses = await Promise.all(cases.map(([, auth]) => getUoms(auth as string).then((r) => r.status)));
    expect(statuses).toEqual(cases.map(([status]) => status));
  });

  describe('accepts', () => {
    it('a valid token', async () => {
      const t = await newTenant(ctx, ['catalog:read']);
      const res = await t.get('/v1/uoms').expect(200);
      expect(res.body.count).toBe(8);
    });

    it('the space-delimited scope claim when the permissions claim is absent', async () => {
      const tenantId = randomUUID();
      const withScope = await ctx.idp.token({ tenantId, permissions: null, scope: 'openid catalog:read profile' });
      await getUoms(bearer(withScope)).expect(200);
      const withoutIt = await ctx.idp.token({ tenantId, permissions: null, scope: 'openid catalog:write' });
      const res = await getUoms(bearer(withoutIt)).expect(403);
      expect(res.body).toEqual({ error: 'forbidden', message: expect.stringContaining('catalog:read'), status: 403 });
    });

    it('the permissions claim over scope when both are present', async () => {
      const token = await ctx.idp.token({ permissions: ['catalog:write'], scope: 'catalog:read' });
      await getUoms(bearer(token)).expect(403);
    });

    it('a token expired 10 s ago (default clock tolerance 30 s)', async () => {
      const token = await ctx.idp.token({ permissions: ['catalog:read'], expiresInSeconds: -10 });
      await getUoms(bearer(token)).expect(200);
    });

    it('an audience array containing ours', async () => {
      const token = await ctx.idp.token({ permissions: ['catalog:read'], audience: ['https://other.example.com', ctx.idp.audience] });
      await getUoms(bearer(token)).expect(200);
    });

    it('an upper-case tenant UUID as the same tenant', async () => {
      const t = await newTenant(ctx);
      await t.post('/v1/uoms', { code: 'CASE', name: 'Case', decimals: 0 }).expect(201);
      const upper = await ctx.idp.token({ tenantId: t.tenantId.toUpperCase(), permissions: ['catalog:read'] });
      const res = await getUoms(bearer(upper)).query({ q: 'CASE' }).expect(200);
      expect(res.body.count).toBe(1);
    });
  });

  describe('refuses with 403 forbidden', () => {
    it('a read without catalog:read', async () => {
      const t = await newTenant(ctx, ['catalog:write', 'inventory:read']);
      const res = await t.get('/v1/uoms').expect(403);
      expect(res.body).toEqual({ error: 'forbidden', message: expect.stringContaining('catalog:read'), status: 403 });
    });

    it('a write without catalog:write, and nothing is written', async () => {
      const t = await newTenant(ctx, ['catalog:read']);
      const res = await t.post('/v1/uoms', { code: 'NOPE', name: 'Nope', decimals: 0 }).expect(403);
      expect(res.body).toEqual({ error: 'forbidden', message: expect.stringContaining('catalog:write'), status: 403 });
      const rows = await ctx.db.query(`SELECT 1 FROM uoms WHERE tenant_id = $1 AND code = 'NOPE'`, [t.tenantId]);
      expect(rows).toHaveLength(0);
    });

    it('a token with no permissions at all', async () => {
      const t = await newTenant(ctx, []);
      await t.get('/v1/uoms').expect(403);
    });
  });

  describe('claims that are present but malformed are refused, with real tokens', () => {
    it.each([
      ['a sub with NUL', { sub: 'user\u0000x' }],
      ['a sub of 256 characters', { sub: 'u'.repeat(256) }],
      ['a permissions claim that is a string', { permissions: 'catalog:read' }],
      ['a permissions claim holding a number', { permissions: ['catalog:read', 1] }],
    ])('%s → 401, and nothing is written', async (_, claims) => {
      const t = await newTenant(ctx);
      const { sub, permissions } = claims as { sub?: string; permissions?: unknown };
      const token = await ctx.idp.token({
        tenantId: t.tenantId, sub, scope: 'catalog:read catalog:write',
        ...(permissions !== undefined ? { permissions: null, extraClaims: { [`${ctx.idp.claimNamespace}permissions`]: permissions } } : { permissions: ['catalog:read', 'catalog:write'] }),
      });
      const res = await ctx.http.post('/v1/uoms').set('Authorization', bearer(token)).send({ code: 'CLAIM', name: 'Claim', decimals: 0 });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ error: 'unauthorized', status: 401 });
      expect(await ctx.db.query(`SELECT 1 FROM uoms WHERE tenant_id = $1 AND code = 'CLAIM'`, [t.tenantId])).toHaveLength(0);
    });
  });

  describe('sub is the acting user', () => {
    it('becomes the principal user id (what every write records as createdBy/updatedBy)', () => {
      const tenantId = randomUUID();
      const principal = principalFromClaims(
        { sub: 'user-42', exp: 1, 'ns/tenant_id': tenantId, 'ns/permissions': ['catalog:read'] },
        'ns/',
      );
      expect(principal.userId).toBe('user-42');
      expect(principal.tenantId).toBe(tenantId);
      expect([...principal.permissions]).toEqual(['catalog:read']);
    });

    it('is recorded as created_by/updated_by on a created item', async () => {
      const t = await newTenant(ctx);
      const sub = `user-${randomUUID()}`;
      const token = await ctx.idp.token({ tenantId: t.tenantId, permissions: ['catalog:read', 'catalog:write'], sub });
      const uoms = await t.get('/v1/uoms?q=EA').expect(200);
      const ea = uoms.body.data.find((u: { code: string }) => u.code === 'EA');
      const res = await ctx.http
        .post('/v1/items')
        .set('Authorization', bearer(token))
        .send({ itemNo: 'SUB-1', name: 'Audited', baseUomId: ea.id });
      expect(res.status).toBe(201);
      const [row] = await ctx.db.query(`SELECT created_by, updated_by FROM items WHERE tenant_id = $1 AND id = $2`, [t.tenantId, res.body.data.id]);
      expect(row).toEqual({ created_by: sub, updated_by: sub });
    });
  });
});
