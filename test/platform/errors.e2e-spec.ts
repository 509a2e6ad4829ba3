import { request as httpRequest } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import type * as FilterModule from '../../src/common/exception.filter';
import { fromDist } from '../support/dist';
import { newTenant, startApp, Tenant, TestContext, PLATFORMS } from '../support/app';

const { toErrorBody } = fromDist<typeof FilterModule>('common/exception.filter');

/** Nothing internal in an error body: no stack frames, SQL, driver or file names. */
function expectNothingInternal(body: unknown): void {
  const text = JSON.stringify(body);
  expect(text).not.toMatch(/\bat .+\(.+:\d+:\d+\)|\.(ts|js):\d+|node_modules/);
  expect(text).not.toMatch(/\b(SELECT|INSERT|UPDATE|DELETE)\b.+\b(FROM|INTO|SET)\b/i);
  expect(text).not.toMatch(/QueryFailedError|SQLSTATE|stack|pg_|relation "/i);
}

describe.each(PLATFORMS)('errors and request conventions (CONTRACT §1, §2) on %s', (platform) => {
  let ctx: TestContext;
  let t: Tenant;
  beforeAll(async () => {
    ctx = await startApp({ HTTP_PLATFORM: platform });
    t = await newTenant(ctx);
  });
  afterAll(() => ctx.close());

  describe('unknown routes → 404 not_found', () => {
    it.each(['/nope', '/v1/nope', '/v1/uoms/extra/segments', '/v2/uoms'])('%s, without a token', async (url) => {
      const res = await ctx.http.get(url).expect(404);
      expect(res.body).toEqual({ error: 'not_found', message: expect.stringMatching(/not found/i), status: 404 });
      expect(res.headers['content-type']).toMatch(/application\/json/);
    });

    it('with a token, and for other methods', async () => {
      const get = await t.get('/v1/nope').expect(404);
      expect(get.body).toEqual({ error: 'not_found', message: 'Route GET /v1/nope not found', status: 404 });
      const del = await ctx.http.delete('/v1/uoms').set(t.auth).expect(404);
      expect(del.body).toMatchObject({ error: 'not_found', status: 404 });
    });
  });

  describe('paths', () => {
    it('a trailing slash and the letter case of the path do not matter', async () => {
      const canonical = (await t.get('/v1/facilities').expect(200)).body;
      expect((await t.get('/v1/facilities/').expect(200)).body).toEqual(canonical);
      expect((await t.get('/V1/FACILITIES').expect(200)).body).toEqual(canonical);
    });

    it('a path that cannot be decoded → 400 bad_request in the error shape, with a request id and the security headers', async () => {
      const res = await t.get('/v1/items/%FF').expect(400);
      expect(res.body).toEqual({ error: 'bad_request', message: 'Malformed URL: it cannot be decoded', status: 400 });
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.headers).toMatchObject({ 'x-content-type-options': 'nosniff', 'x-frame-options': 'SAMEORIGIN' });
    });

    it('every kind of answer carries the security headers: a 404, a body refused before it was read, a validation error', async () => {
      const answers = [
        await t.get('/v1/nope').expect(404),
        await ctx.http.post('/v1/uoms').set(t.auth).set('Content-Type', 'text/plain').send('x').expect(400),
        await t.post('/v1/uoms', { code: 'bad code!' }).expect(400),
      ];
      for (const res of answers) expect(res.headers).toMatchObject({ 'x-content-type-options': 'nosniff', 'strict-transport-security': expect.any(String), 'x-request-id': expect.any(String) });
    });

    it('a very long path parameter reaches its route like any other (not the router\'s 414)', async () => {
      const res = await t.get(`/v1/items/${'a'.repeat(1500)}`).expect(404);
      expect(res.body).toEqual({ error: 'not_found', message: 'Item not found', status: 404 });
    });
  });

  describe('bodies', () => {
    it('malformed JSON → 400 bad_request saying where', async () => {
      const res = await ctx.http.post('/v1/uoms').set(t.auth).set('Content-Type', 'application/json').send('{"code": "X",').expect(400);
      expect(res.body).toEqual({ error: 'bad_request', message: expect.stringMatching(/^Malformed JSON body: .*position 13/), status: 400 });
      expectNothingInternal(res.body);
    });

    it('malformed JSON is refused before authentication too (same body shape)', async () => {
      const res = await ctx.http.post('/v1/uoms').set('Content-Type', 'application/json').send('{oops').expect(400);
      expect(res.body).toMatchObject({ error: 'bad_request', status: 400 });
    });

    it('a text/plain body on POST → 400 bad_request, nothing created', async () => {
      const res = await ctx.http
        .post('/v1/uoms')
        .set(t.auth)
        .set('Content-Type', 'text/plain')
        .send(JSON.stringify({ code: 'TXT', name: 'Text', decimals: 0 }))
        .expect(400);
      expect(res.body).toEqual({ error: 'bad_request', message: expect.stringMatching(/JSON/), status: 400 });
      expect(await ctx.db.query(`SELECT 1 FROM uoms WHERE tenant_id = $1 AND code = 'TXT'`, [t.tenantId])).toHaveLength(0);
    });

    it('a form-encoded body → 400 bad_request', async () => {
      const res = await ctx.http.post('/v1/uoms').set(t.auth).type('form').send('code=FRM&name=Form&decimals=0').expect(400);
      expect(res.body.error).toBe('bad_request');
    });

    it('application/json with a charset is accepted', async () => {
      await ctx.http
        .post('/v1/uoms')
        .set(t.auth)
        .set('Content-Type', 'application/json; charset=utf-8')
        .send(JSON.stringify({ code: 'UTF', name: 'Charset', decimals: 0 }))
        .expect(201);
    });

    it('a body over 1 MiB → 413 payload_too_large', async () => {
      const big = JSON.stringify({ code: 'BIG', name: 'x'.repeat(1024 * 1024), decimals: 0 });
      const res = await ctx.http.post('/v1/uoms').set(t.auth).set('Content-Type', 'application/json').send(big).expect(413);
      expect(res.body).toEqual({ error: 'payload_too_large', message: expect.any(String), status: 413 });
    });

    it('a body just under 1 MiB is parsed (then validated)', async () => {
      const body = JSON.stringify({ code: 'BIG', name: 'x'.repeat(1000 * 1000), decimals: 0 });
      const res = await ctx.http.post('/v1/uoms').set(t.auth).set('Content-Type', 'application/json').send(body).expect(400);
      expect(res.body).toMatchObject({ error: 'validation_failed', details: [{ field: 'name', message: expect.any(String) }] });
    });

    it('an unknown body field → 400 validation_failed with details', async () => {
      const res = await t.post('/v1/uoms', { code: 'UNK', name: 'Unknown', decimals: 0, colour: 'red' }).expect(400);
      expect(res.body).toEqual({
        error: 'validation_failed',
        message: expect.stringContaining('colour'),
        status: 400,
        details: [{ field: 'colour', message: 'is not an allowed field' }],
      });
    });

    it('several problems are all listed', async () => {
      const res = await t.post('/v1/uoms', { code: '', decimals: 'two' }).expect(400);
      const fields = res.body.details.map((d: { field: string }) => d.field);
      expect(fields).toEqual(expect.arrayContaining(['code', 'name', 'decimals']));
    });

    it('a JSON array or a bare value as the body → 400 validation_failed', async () => {
      const arr = await ctx.http.post('/v1/uoms').set(t.auth).set('Content-Type', 'application/json').send('[]').expect(400);
      expect(arr.body.error).toBe('validation_failed');
    });

    it('an empty POST body → 400 validation_failed naming the required fields', async () => {
      const res = await ctx.http.post('/v1/uoms').set(t.auth).expect(400);
      expect(res.body.error).toBe('validation_failed');
      expect(res.body.details.map((d: { field: string }) => d.field)).toEqual(expect.arrayContaining(['code', 'name', 'decimals']));
    });

    it('an empty body sent as application/json reads as {} → 400 validation_failed', async () => {
      const res = await ctx.http.post('/v1/uoms').set(t.auth).set('Content-Type', 'application/json').set('Content-Length', '0').expect(400);
      expect(res.body.error).toBe('validation_failed');
      expect(res.body.details.map((d: { field: string }) => d.field)).toEqual(expect.arrayContaining(['code', 'name', 'decimals']));
    });

    it('a bare JSON value (not an object or array) → 400 Malformed JSON body', async () => {
      for (const text of ['"text"', '42', 'null', 'true']) {
        const res = await ctx.http.post('/v1/uoms').set(t.auth).set('Content-Type', 'application/json').send(text).expect(400);
        expect(res.body).toEqual({ error: 'bad_request', message: 'Malformed JSON body: the body must be a JSON object or array', status: 400 });
      }
    });

    it('a body that arrives in pieces over time is read whole, in the request\'s own context (tenant, user)', async () => {
      const json = JSON.stringify({ code: 'SLOW', name: 'Slow body', decimals: 0 });
      const body = Buffer.from(json.slice(0, -1) + ' '.repeat(300_000) + '}');
      const { port } = new URL(ctx.url);
      const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/v1/uoms', headers: { ...t.auth, 'Content-Type': 'application/json', 'Content-Length': body.length } }, (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode!, text }));
        });
        req.on('error', reject);
        const pieces = [body.subarray(0, 10), body.subarray(10, 150_000), body.subarray(150_000)];
        const send = (i: number) => (i === pieces.length ? req.end() : req.write(pieces[i], () => setTimeout(() => send(i + 1), 40)));
        send(0);
      });
      expect(answer.status).toBe(201);
      expect(await ctx.db.query(`SELECT name FROM uoms WHERE tenant_id = $1 AND code = 'SLOW'`, [t.tenantId])).toEqual([{ name: 'Slow body' }]);
    });

    it('application/*+json is JSON too, with or without a charset', async () => {
      await ctx.http.post('/v1/uoms').set(t.auth).set('Content-Type', 'application/merge-patch+json')
        .send(JSON.stringify({ code: 'PJSON', name: 'Plus JSON', decimals: 0 })).expect(201);
      await ctx.http.post('/v1/uoms').set(t.auth).set('Content-Type', 'application/vnd.api+json; charset=utf-8')
        .send(JSON.stringify({ code: 'PJSON2', name: 'Plus JSON', decimals: 0 })).expect(201);
    });

    it('an empty body under another Content-Type (a client default on a bodiless action) is no body, not an error', async () => {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
        const res = await ctx.http.post('/v1/uoms').set(t.auth).set('Content-Type', type).set('Content-Length', '0').expect(400);
        // validated as an empty body (the fields are named), not refused as a non-JSON body
        expect(res.body.error).toBe('validation_failed');
      }
    });

    it('Content-Encoding on a request without a body is ignored', async () => {
      await t.get('/v1/facilities').set('Content-Encoding', 'zstd').expect(200);
    });

    it('Content-Encoding gzip, deflate and br bodies are inflated, the 1 MiB limit applies to the inflated body, other encodings → 400', async () => {
      const body = (code: string, name = code) => Buffer.from(JSON.stringify({ code, name, decimals: 0 }));
      // fetch sends the bytes as they are (supertest re-encodes a Buffer sent as JSON)
      const post = async (encoding: string, bytes: Buffer) => {
        const res = await fetch(`${ctx.url}/v1/uoms`, { method: 'POST', headers: { ...t.auth, 'Content-Type': 'application/json', 'Content-Encoding': encoding }, body: bytes });
        return { status: res.status, body: (await res.json()) as unknown };
      };
      for (const [encoding, pack] of [['gzip', gzipSync], ['deflate', deflateSync], ['br', brotliCompressSync]] as const) {
        expect(await post(encoding, pack(body(`Z${encoding.toUpperCase()}`)))).toMatchObject({ status: 201 });
      }
      expect(await ctx.db.query(`SELECT code FROM uoms WHERE tenant_id = $1 AND code LIKE 'Z%' ORDER BY code`, [t.tenantId]))
        .toEqual([{ code: 'ZBR' }, { code: 'ZDEFLATE' }, { code: 'ZGZIP' }]);
      // 2 MiB of one letter inflates from a few kB: still 413
      const bomb = gzipSync(body('BOMB', 'x'.repeat(2 * 1024 * 1024)));
      expect(bomb.length).toBeLessThan(10_000);
      expect(await post('gzip', bomb)).toEqual({ status: 413, body: { error: 'payload_too_large', message: 'Request body exceeds 1 MiB', status: 413 } });
      expect(await post('gzip', body('NOTGZ'))).toEqual({
        status: 400,
        body: { error: 'bad_request', message: expect.stringMatching(/^Request body could not be decompressed/), status: 400 },
      });
      expect(await post('zstd', body('ZSTD'))).toEqual({
        status: 400,
        body: { error: 'bad_request', message: 'Unsupported request body: unsupported content encoding "zstd"', status: 400 },
      });
      expect(await ctx.db.query(`SELECT 1 FROM uoms WHERE tenant_id = $1 AND code IN ('BOMB', 'NOTGZ', 'ZSTD')`, [t.tenantId])).toEqual([]);
    });

    describe('prototype keys (__proto__, constructor, prototype) are not allowed fields, at any depth', () => {
      const raw = (url: string, json: string) => ctx.http.post(url).set(t.auth).set('Content-Type', 'application/json').send(json);

      it.each(['__proto__', 'constructor', 'prototype'])('%s at the top level → 400 validation_failed, nothing created', async (key) => {
        const code = `P${key.length}`;
        const res = await raw('/v1/uoms', `{"code": "${code}", "name": "Proto", "decimals": 0, "${key}": {"x": 1}}`).expect(400);
        expect(res.body).toEqual({
          error: 'validation_failed',
          message: expect.stringContaining(key),
          status: 400,
          details: [{ field: key, message: 'is not an allowed field' }],
        });
        expect(await ctx.db.query(`SELECT 1 FROM uoms WHERE tenant_id = $1 AND code = $2`, [t.tenantId, code])).toHaveLength(0);
      });

      it('inside nested objects and arrays, each named by its path', async () => {
        const uom = (await t.get('/v1/uoms?limit=500').expect(200)).body.data.find((u: { code: string }) => u.code === 'EA');
        const body = `{"itemNo": "PROTO-1", "name": "Proto", "baseUomId": "${uom.id}",
          "identifiers": [{"type": "sku", "value": "P-1", "__proto__": {"isAdmin": true}}],
          "attributes": [{"name": "a", "value": "b"}, {"name": "c", "value": "d", "constructor": {"prototype": {"x": 1}}}]}`;
        const res = await raw('/v1/items', body).expect(400);
        expect(res.body).toMatchObject({ error: 'validation_failed', status: 400 });
        expect(res.body.details).toEqual([
          { field: 'identifiers[0].__proto__', message: 'is not an allowed field' },
          { field: 'attributes[1].constructor', message: 'is not an allowed field' },
        ]);
        expect((await t.get('/v1/items?q=PROTO-1').expect(200)).body.count).toBe(0);
        // The same body without them is fine: the keys, not the values, are refused.
        const clean = `{"itemNo": "PROTO-1", "name": "constructor", "baseUomId": "${uom.id}", "attributes": [{"name": "__proto__", "value": "prototype"}]}`;
        await raw('/v1/items', clean).expect(201);
      });
    });

    it('a body nested deeper than any request needs → 400 validation_failed naming where, not a 500 (stack overflow)', async () => {
      const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
      const post = (json: string) => ctx.http.post('/v1/uoms').set(t.auth).set('Content-Type', 'application/json').send(json);
      const field = await post(`{"code": "DEEP", "name": "Deep", "decimals": 0, "x": ${deep(50000)}}`).expect(400);
      expect(field.body).toMatchObject({ error: 'validation_failed', status: 400 });
      expect(field.body.details).toEqual([{ field: `x${'[0]'.repeat(31)}`, message: 'is nested more than 32 levels deep' }]);
      const whole = await post(deep(50000)).expect(400);
      expect(whole.body.error).toBe('validation_failed');
      // Within the limit, the unknown field is refused as such.
      const shallow = await post(`{"code": "DEEP", "name": "Deep", "decimals": 0, "x": ${deep(30)}}`).expect(400);
      expect(shallow.body.details).toEqual([{ field: 'x', message: 'is not an allowed field' }]);
      expect(await ctx.db.query(`SELECT 1 FROM uoms WHERE tenant_id = $1 AND code = 'DEEP'`, [t.tenantId])).toHaveLength(0);
    });

    it('a NUL character (which PostgreSQL cannot store) → 400 validation_failed, not a 500', async () => {
      const res = await t.post('/v1/uoms', { code: 'NUL', name: 'bad\u0000name', decimals: 0 }).expect(400);
      expect(res.body).toMatchObject({ error: 'validation_failed', status: 400 });
      expectNothingInternal(res.body);
    });
  });

  describe('X-Request-Id', () => {
    it('is echoed when sent', async () => {
      const res = await t.get('/v1/facilities').set('X-Request-Id', 'trace-abc.123:x').expect(200);
      expect(res.headers['x-request-id']).toBe('trace-abc.123:x');
    });

    it('is generated when absent or unusable, also on errors', async () => {
      const a = await t.get('/v1/facilities').expect(200);
      const b = await t.get('/v1/facilities').expect(200);
      expect(a.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(b.headers['x-request-id']).not.toBe(a.headers['x-request-id']);
      const bad = await ctx.http.get('/v1/uoms').set('X-Request-Id', 'x'.repeat(500)).expect(401);
      expect(bad.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      const notFound = await ctx.http.get('/nope').set('X-Request-Id', 'rid-404').expect(404);
      expect(notFound.headers['x-request-id']).toBe('rid-404');
    });
  });

  describe('internals never reach the client', () => {
    it('a database error the service did not expect → 500 internal_error, generic message', () => {
      const err = Object.assign(new Error('syntax error at or near "SELEC"'), {
        code: '42601',
        query: 'SELEC * FROM uoms WHERE tenant_id = $1',
        stack: 'QueryFailedError: syntax error\n    at PostgresQueryRunner.query (node_modules/typeorm/x.js:1:2)',
      });
      const body = toErrorBody(err);
      expect(body).toEqual({ error: 'internal_error', message: 'Internal server error', status: 500 });
      expect(toErrorBody(new TypeError("Cannot read properties of undefined (reading 'id')"))).toEqual(body);
    });

    it('a NOT NULL violation (a value validation let through as null) → 400 validation_failed, not a 500', () => {
      const err = Object.assign(new Error('null value in column "uom_id" of relation "item_uom_conversions" violates not-null constraint'), {
        code: '23502',
        column: 'uom_id',
      });
      const body = toErrorBody(err);
      expect(body).toEqual({ error: 'validation_failed', message: expect.any(String), status: 400, details: [{ field: 'uomId', message: body.message }] });
      expectNothingInternal(body);
      // TypeORM wraps the driver error: the same mapping.
      expect(toErrorBody(Object.assign(new Error('QueryFailedError'), { driverError: err }))).toEqual(body);
    });

    it('a constraint violation answers by the constraint map: not every CHECK is insufficient_stock, none is a 500', async () => {
      const violation = (code: string, constraint: string) =>
        Object.assign(new Error('QueryFailedError'), { driverError: Object.assign(new Error(`violates check constraint "${constraint}"`), { code, constraint }) });
      expect(toErrorBody(violation('23514', 'balance_not_negative'))).toEqual({ error: 'insufficient_stock', message: expect.any(String), status: 409 });
      expect(toErrorBody(violation('23514', 'position_not_overcommitted'))).toMatchObject({ error: 'insufficient_stock', status: 409 });
      expect(toErrorBody(violation('23514', 'reorder_policy_min_max'))).toEqual({
        error: 'validation_failed', message: 'minQty must not exceed maxQty', status: 400, details: [{ field: 'minQty', message: 'minQty must not exceed maxQty' }],
      });
      expect(toErrorBody(violation('23514', 'transfer_between_facilities'))).toMatchObject({ error: 'validation_failed', status: 400 });
      expect(toErrorBody(violation('23514', 'reservation_quantities'))).toMatchObject({ error: 'invalid_state', status: 409 });
      // Unmapped: a clear 400, with nothing internal in the body.
      const unknownCheck = toErrorBody(violation('23514', 'some_future_check'));
      // Every 400 validation_failed lists details, also when only the database knew the rule.
      expect(unknownCheck).toEqual({ error: 'validation_failed', message: expect.any(String), status: 400, details: [{ message: unknownCheck.message }] });
      expect(JSON.stringify(unknownCheck)).not.toMatch(/some_future_check/);
      expect(toErrorBody(violation('23503', 'balances_tenant_id_item_id_fkey'))).toEqual({ error: 'validation_failed', message: expect.any(String), status: 400, details: [expect.objectContaining({ message: expect.any(String) })] });
    });

    it('a unique violation names the fields, not the SQL or constraint', async () => {
      await t.post('/v1/uoms', { code: 'DUP', name: 'One', decimals: 0 }).expect(201);
      const res = await t.post('/v1/uoms', { code: 'DUP', name: 'Two', decimals: 0 }).expect(409);
      expect(res.body).toEqual({ error: 'duplicate', message: 'A record with the same code already exists', status: 409 });
      expectNothingInternal(res.body);
    });

    it('every error body above has only error, message, status (and details)', async () => {
      const bodies = [
        (await ctx.http.get('/v1/uoms').expect(401)).body,
        (await newTenant(ctx, []).then((x) => x.get('/v1/uoms'))).body,
        (await t.get('/v1/uoms?limit=0')).body,
        (await t.get('/nope')).body,
      ];
      for (const body of bodies) {
        expect(Object.keys(body).sort()).toEqual(expect.arrayContaining(['error', 'message', 'status']));
        expect(Object.keys(body).filter((k) => !['error', 'message', 'status', 'details'].includes(k))).toEqual([]);
        expectNothingInternal(body);
      }
    });
  });

  describe('list paging (CONTRACT §1)', () => {
    it.each([
      ['limit=0', 'limit'],
      ['limit=501', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=', 'limit'],
      ['offset=-1', 'offset'],
      ['offset=abc', 'offset'],
      ['limit=10&limit=20', 'limit'],
    ])('%s → 400 validation_failed naming %s', async (query, field) => {
      const res = await t.get(`/v1/uoms?${query}`).expect(400);
      expect(res.body).toMatchObject({ error: 'validation_failed', status: 400 });
      expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
    });

    it('defaults to limit 50, offset 0', async () => {
      const res = await t.get('/v1/uoms').expect(200);
      expect(res.body).toMatchObject({ limit: 50, offset: 0, count: expect.any(Number) });
      expect(res.body.data.length).toBe(res.body.count);
    });

    it('pages with limit and offset over a stable order, count is the total', async () => {
      const all = (await t.get('/v1/uoms?limit=500').expect(200)).body;
      expect(all.limit).toBe(500);
      const first = (await t.get('/v1/uoms?limit=3&offset=0').expect(200)).body;
      const second = (await t.get('/v1/uoms?limit=3&offset=3').expect(200)).body;
      expect(first).toMatchObject({ limit: 3, offset: 0, count: all.count });
      expect(second).toMatchObject({ limit: 3, offset: 3, count: all.count });
      expect([...first.data, ...second.data]).toEqual(all.data.slice(0, 6));
      const past = (await t.get(`/v1/uoms?offset=${all.count}`).expect(200)).body;
      expect(past).toMatchObject({ data: [], count: all.count });
    });

    it('ignores unknown query parameters', async () => {
      const res = await t.get('/v1/uoms?foo=bar&sort=evil&limit=2').expect(200);
      expect(res.body).toMatchObject({ limit: 2, offset: 0 });
      expect(res.body.data).toHaveLength(2);
    });
  });
});
