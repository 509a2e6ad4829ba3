import { newTenant, startApp, TestContext } from '../support/app';
import { checked, problemWith } from '../support/openapi-check';

/**
 * The e2e client's check of answers against the OpenAPI description (test/support/openapi-check.ts) runs
 * on the suite's requests and would catch an answer that drifted from its description.
 */
describe('the e2e client checks every answer against the description', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  it('checks the answers of ordinary requests', async () => {
    const before = checked.count;
    const t = await newTenant(ctx);
    await t.get('/v1/uoms').expect(200);
    await t.get('/v1/items/00000000-0000-4000-8000-000000000000').expect(404);
    await t.get('/v1/no-such-route').expect(404);
    expect(checked.count - before).toBe(3);
  });

  it('finds an extra field, a missing one, a wrong type, a wrong error shape and an undocumented success status', async () => {
    const t = await newTenant(ctx);
    const body = (await t.get('/v1/uoms').expect(200)).body;
    const url = `${ctx.url}/v1/uoms`;
    const json = 'application/json; charset=utf-8';
    expect(problemWith('GET', url, 200, json, body)).toBeUndefined();
    const [uom] = body.data;
    const variant = (u: object) => ({ ...body, data: [u] });
    expect(problemWith('GET', url, 200, json, variant({ ...uom, colour: 'red' }))).toMatch(/must NOT have additional properties "colour"/);
    const { decimals: _, ...without } = uom;
    expect(problemWith('GET', url, 200, json, variant(without))).toMatch(/must have required property 'decimals'/);
    expect(problemWith('GET', url, 200, json, variant({ ...uom, decimals: '0' }))).toMatch(/decimals must be (integer|number)/);
    expect(problemWith('GET', url, 200, json, variant({ ...uom, id: 'not-a-uuid' }))).toMatch(/must match format "uuid"/);
    expect(problemWith('GET', url, 400, json, { error: 'nope', message: 'x', status: 400 })).toMatch(/must be equal to one of the allowed values/);
    expect(problemWith('GET', url, 201, json, body)).toMatch(/answered 201, which its description does not list/);
  });
});
