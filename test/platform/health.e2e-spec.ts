import { startApp, TestContext } from '../support/app';

describe('GET /health', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  it('is public and reports service, status, version and timestamp', async () => {
    const res = await ctx.http.get('/health').expect(200);
    expect(res.body).toEqual({
      service: 'inventory-service',
      status: 'ok',
      version: require('../../package.json').version,
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(res.headers['x-request-id']).toBeTruthy();
  });
});
