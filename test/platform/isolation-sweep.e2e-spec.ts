import { recordsOfEveryKind, routeWithIds } from '../support/fixtures';
import { startApp, TestContext } from '../support/app';

type Schema = {
  $ref?: string; type?: string | string[]; format?: string; enum?: unknown[]; properties?: Record<string, Schema>; required?: string[];
  items?: Schema; minItems?: number; minimum?: number; exclusiveMinimum?: number | boolean; maximum?: number; minLength?: number;
  allOf?: Schema[]; oneOf?: Schema[]; anyOf?: Schema[]; pattern?: string;
};
type Doc = { paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema: Schema }> } }>>; components: { schemas: Record<string, Schema> } };

/** The collection whose ids a body field names (`itemId` → `items`, `toFacilityId` → `facilities`, …). */
const COLLECTIONS: Array<[RegExp, string]> = [
  [/item/i, 'items'], [/location/i, 'locations'], [/facility/i, 'facilities'], [/supplier/i, 'suppliers'], [/customer/i, 'customers'],
  [/reservation/i, 'reservations'], [/bom/i, 'boms'], [/^(line)?id$/i, ''],
];

/**
 * A body valid for the route's DTO schema (every required field, within its bounds), naming the caller's
 * own records where a field is an id: a refusal of it can only come from the record of the path.
 */
function validBody(doc: Doc, schema: Schema | undefined, ids: Record<string, string>, uoms: Record<string, string>, name = ''): unknown {
  if (!schema) return undefined;
  if (schema.$ref) return validBody(doc, doc.components.schemas[schema.$ref.split('/').pop()!], ids, uoms, name);
  const parts = schema.allOf ?? schema.oneOf ?? schema.anyOf;
  if (parts) return validBody(doc, parts[0], ids, uoms, name);
  if (schema.enum) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (type === 'object' || schema.properties) {
    const body: Record<string, unknown> = {};
    // the required fields, and a location where one may be given (a state may require it: a work order without an output location)
    const keys = Object.keys(schema.properties ?? {}).filter((key) => schema.required?.includes(key) || /LocationId$/.test(key));
    for (const key of keys) body[key] = validBody(doc, schema.properties?.[key], ids, uoms, key);
    return body;
  }
  if (type === 'array') return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => validBody(doc, schema.items, ids, uoms, name));
  if (type === 'integer' || type === 'number') {
    const min = typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : (schema.minimum ?? 0) + (schema.exclusiveMinimum === true ? 1 : 0);
    return Math.min(Math.max(1, min), schema.maximum ?? Number.MAX_SAFE_INTEGER);
  }
  if (type === 'boolean') return false;
  if (schema.format === 'uuid' || /Id$/.test(name)) {
    if (/uom/i.test(name)) return uoms.EA;
    const collection = COLLECTIONS.find(([re]) => re.test(name))?.[1];
    return (collection && ids[collection]) || '00000000-0000-4000-8000-000000000000';
  }
  if (schema.format === 'date-time') return new Date(Date.now() + 86_400_000).toISOString();
  if (schema.format === 'date') return new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  return 'X'.repeat(Math.max(1, schema.minLength ?? 1)).replace(/^X+$/, (x) => (name === 'currency' ? 'USD' : /code|no$/i.test(name) ? `C${Date.now() % 1e6}`.slice(0, Math.max(x.length, 7)) : x));
}

/**
 * Every route with an id, enumerated from the OpenAPI description the router generates, called by
 * another tenant with the ids of tenant A's records and a body valid for the route (built from its
 * schema, naming the caller's own records): every call is 404 — never a success, a 409 or a 412, which
 * would show that the record was found, nor a 400, which would leave the question open. Each write's
 * body is shown valid: the same call on the caller's own record is not refused as `validation_failed`.
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
    const own = await recordsOfEveryKind(ctx);
    const b = own.t;
    const uoms = Object.fromEntries(((await b.get('/v1/uoms?limit=100').expect(200)).body.data as Array<{ id: string; code: string }>).map((u) => [u.code, u.id]));

    const doc = (await ctx.http.get('/openapi.json').expect(200)).body as Doc;
    const calls: string[] = [];
    const call = (method: string, url: string, body: unknown) =>
      (ctx.http as unknown as Record<string, (u: string) => { set(h: string, v: string): { send(b: unknown): Promise<{ status: number; body: { error?: string } }> } }>)[method](url)
        .set('Authorization', b.auth.Authorization).send(body as object);
    const wrong: unknown[] = [];
    const invalid: unknown[] = [];
    const writes: Array<{ method: string; path: string; body: unknown }> = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (!path.startsWith('/v1/') || !path.includes('{')) continue;
      // each {param} takes the id of A's record of the collection just before it
      const url = routeWithIds(path, ids);
      for (const [method, op] of Object.entries(ops)) {
        const schema = op.requestBody?.content?.['application/json']?.schema;
        const body = method === 'get' ? undefined : (validBody(doc, schema, own.ids, uoms) ?? {});
        const res = await call(method, url, body);
        calls.push(`${method.toUpperCase()} ${path} → ${res.status}`);
        if (res.status !== 404 || res.body.error !== 'not_found') wrong.push({ call: `${method} ${path}`, body, status: res.status, answer: res.body });
        expect(JSON.stringify(res.body)).not.toContain(a.t.tenantId);
        if (method !== 'get') writes.push({ method, path, body });
      }
    }
    expect(wrong).toEqual([]);
    expect(calls.length).toBeGreaterThan(40);
    // The bodies were valid: on the caller's own records, none of them is refused by validation.
    for (const w of writes) {
      const res = await call(w.method, routeWithIds(w.path, own.ids), w.body);
      if (res.status === 400) invalid.push({ call: `${w.method} ${w.path}`, body: w.body, answer: res.body });
    }
    expect(invalid).toEqual([]);

    // Every list B can read shows none of A's records.
    const lists = Object.entries(doc.paths).filter(([path, ops]) => path.startsWith('/v1/') && !path.includes('{') && 'get' in ops).map(([path]) => path);
    expect(lists.length).toBeGreaterThan(15);
    for (const path of lists) {
      const res = await ctx.http.get(path).set('Authorization', b.auth.Authorization);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      for (const id of Object.values(ids)) expect({ path, leaks: JSON.stringify(res.body).includes(id) }).toEqual({ path, leaks: false });
    }
  }, 180_000);
});
