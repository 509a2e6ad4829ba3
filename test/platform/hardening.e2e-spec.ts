import { connect } from 'node:net';
import { newTenant, startApp, TestContext, PLATFORMS } from '../support/app';

/** Raw bytes to the service, the whole answer back (status line, headers, body). */
function raw(url: string, request: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(request));
    let data = '';
    socket.on('data', (d) => (data += d.toString()));
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
  });
}

describe.each(PLATFORMS)('Hardening: answers to hostile or odd requests on %s', (platform) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp({ HTTP_PLATFORM: platform });
  });
  afterAll(() => ctx.close());

  it('a malformed request line gets the error shape from Node\'s parser stage (400), not an empty answer', async () => {
    const answer = await raw(ctx.url, 'GARBAGE\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ error: 'bad_request', message: 'Malformed HTTP request', status: 400 });
  });

  it('headers over the limit get 431 with the error shape', async () => {
    const answer = await raw(ctx.url, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: 'bad_request', status: 431 });
  });

  it('a JSON body in an unsupported charset is 400 bad_request', async () => {
    const t = await newTenant(ctx);
    const res = await ctx.http.post('/v1/facilities').set('Authorization', t.auth.Authorization)
      .set('Content-Type', 'application/json; charset=latin1').send('{"code":"X","name":"Y"}');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'bad_request', status: 400 });
  });

  it('a lone UTF-16 surrogate in a text field is refused (400 naming the field) and nothing is stored', async () => {
    const t = await newTenant(ctx);
    const res = await ctx.http.post('/v1/facilities').set('Authorization', t.auth.Authorization)
      .set('Content-Type', 'application/json').send('{"code":"SURR","name":"bad \\ud800 name"}');
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([{ field: 'name', message: 'contains an unpaired UTF-16 surrogate' }]);
    expect(await ctx.db.query(`SELECT 1 FROM facilities WHERE tenant_id = $1`, [t.tenantId])).toHaveLength(0);
    // a well-formed pair (an emoji) is fine
    await ctx.http.post('/v1/facilities').set('Authorization', t.auth.Authorization).set('Content-Type', 'application/json')
      .send('{"code":"EMOJI","name":"box \\ud83d\\udce6"}').expect(201);
  });

  it('401 says WWW-Authenticate: Bearer; security headers are set; no X-Powered-By; no CORS', async () => {
    const res = await ctx.http.get('/v1/items').set('Origin', 'https://evil.example').expect(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    const ok = await ctx.http.get('/health').set('Origin', 'https://evil.example').expect(200);
    expect(ok.headers['x-content-type-options']).toBe('nosniff');
    expect(ok.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(ok.headers['strict-transport-security']).toBeDefined();
    expect(ok.headers['x-powered-by']).toBeUndefined();
    expect(ok.headers['access-control-allow-origin']).toBeUndefined();
  });
});
