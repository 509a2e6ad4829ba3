import { newTenant, startApp, TestContext } from '../support/app';
import { recordsOfEveryKind, routeWithIds } from '../support/fixtures';

/**
 * Every route with an id, enumerated from the OpenAPI description the router generates, called by
 * another tenant with the ids of tenant A's records: GET is 404; a write is 404 (or 400 when its body is
 * refused first) — never a success, a 409 or a 412, which would show that the record was found.
 */
describe('isolation sweep over every route with an id', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  it('another tenant\'s ids are not found on any route', async () => {
    const a = await recordsOfEveryKind(ctx);
    const { ids } = a;

    const b = await newTenant(ctx);
    const doc = (await ctx.http.get('/openapi.json').expect(200)).body as { paths: Record<string, Record<string, unknown>> };
    const calls: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (!path.startsWith('/v1/') || !path.includes('{')) continue;
      // each {param} takes the id of A's record of the collection just before it
      const url = routeWithIds(path, ids);
      for (const method of Object.keys(ops)) {
        const res = await (ctx.http as unknown as Record<string, (u: string) => { set(h: string, v: string): { send(b: object): Promise<{ status: number; body: unknown }> } }>)[method](url)
          .set('Authorization', b.auth.Authorization).send({});
        calls.push(`${method.toUpperCase()} ${path} → ${res.status}`);
        if (method === 'get') expect({ call: `${method} ${path}`, status: res.status }).toEqual({ call: `${method} ${path}`, status: 404 });
        else expect({ call: `${method} ${path}`, status: [400, 404].includes(res.status) }).toEqual({ call: `${method} ${path}`, status: true });
        expect(JSON.stringify(res.body)).not.toContain(a.t.tenantId);
      }
    }
    expect(calls.length).toBeGreaterThan(40);

    // Every list B can read shows none of A's records.
    const lists = Object.entries(doc.paths).filter(([path, ops]) => path.startsWith('/v1/') && !path.includes('{') && 'get' in ops).map(([path]) => path);
    expect(lists.length).toBeGreaterThan(15);
    for (const path of lists) {
      const res = await ctx.http.get(path).set('Authorization', b.auth.Authorization);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      for (const id of Object.values(ids)) expect({ path, leaks: JSON.stringify(res.body).includes(id) }).toEqual({ path, leaks: false });
    }
  }, 120_000);
});
