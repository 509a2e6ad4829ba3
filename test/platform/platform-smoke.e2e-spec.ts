import { randomUUID } from 'node:crypto';
import { newTenant, startApp, TestContext } from '../support/app';

type Doc = { paths: Record<string, Record<string, { requestBody?: unknown }>> };

/**
 * The other platform (CONTRACT §10): the whole e2e suite runs on the default one (express); on Fastify every
 * route of the OpenAPI description is reached once, with ids that do not exist and an empty body. Nothing
 * answers 5xx, and every 4xx is in the contract's error shape.
 */
describe('every documented route once, on fastify', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp({ HTTP_PLATFORM: 'fastify' });
  });
  afterAll(() => ctx.close());

  it('answers every operation without a 5xx, errors in the error shape', async () => {
    const t = await newTenant(ctx);
    const doc: Doc = (await ctx.http.get('/openapi.json').expect(200)).body;
    const problems: string[] = [];
    let reached = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const method of Object.keys(ops)) {
        const url = path.replace(/\{\w+\}/g, () => randomUUID());
        let req = ctx.http[method as 'get' | 'post' | 'patch' | 'put' | 'delete'](url).set(t.auth);
        if (method !== 'get' && method !== 'delete') req = req.send({});
        const res = await req;
        reached++;
        const at = `${method.toUpperCase()} ${path} → ${res.status}`;
        if (res.status >= 500) problems.push(`${at}: ${JSON.stringify(res.body)}`);
        else if (res.status >= 400 && !(typeof res.body?.error === 'string' && typeof res.body.message === 'string' && res.body.status === res.status))
          problems.push(`${at}: not the error shape: ${res.text.slice(0, 200)}`);
      }
    }
    expect(reached).toBeGreaterThan(90);
    expect(problems).toEqual([]);
  }, 120_000);
});
