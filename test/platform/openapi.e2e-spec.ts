import { newTenant, startApp, TestContext } from '../support/app';
import { fromDist, nativeRequire } from '../support/dist';
import type * as Platform from '../../src/http/platform';

const { servedRoutes } = fromDist<typeof Platform>('http/platform');

type Operation = {
  summary?: string;
  description?: string;
  operationId?: string;
  parameters?: Array<{ in: string; name: string; schema?: { type?: string; format?: string } }>;
  requestBody?: unknown;
  responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }>;
  security?: unknown[];
  'x-permissions'?: string[];
};
type Doc = { openapi: string; info: { title: string; version: string; description: string }; paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };

const { Validator } = nativeRequire('@seriousme/openapi-schema-validator') as { Validator: new () => { validate(doc: unknown): Promise<{ valid: boolean; errors?: unknown }> } };

/**
 * Every route Nest registered, as "METHOD /path/{}", from the platform's own router (src/http/platform.ts
 * servedRoutes: Express's router stack, or the routes Fastify's onRoute hook saw; HEAD left out). Parameters
 * are unnamed.
 */
function routes(ctx: TestContext): string[] {
  return [...new Set(servedRoutes(ctx.app).map((r) => r.replace(/:\w+/g, '{}')))];
}

describe('the OpenAPI description is complete and valid', () => {
  let ctx: TestContext;
  let doc: Doc;
  beforeAll(async () => {
    ctx = await startApp();
    doc = (await ctx.http.get('/openapi.json').expect(200)).body;
  });
  afterAll(() => ctx.close());

  it('documents every route Nest serves and nothing else (the router walked, /docs and /openapi.json aside)', () => {
    const served = routes(ctx).filter((r) => !/ \/docs|openapi\.json|\{\/\*splat\}|\*/.test(r)).sort();
    const documented = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path.replace(/\{\w+\}/g, '{}')}`))
      .sort();
    expect(served.length).toBeGreaterThan(90);
    expect(documented).toEqual(served);
  });

  it('passes an OpenAPI schema validator', async () => {
    const result = await new Validator().validate(doc);
    expect(result).toEqual({ valid: true });
  });

  it('every operation: a summary, a success schema, its error responses in the error shape, its permission, typed parameters', () => {
    const problems: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const at = `${method.toUpperCase()} ${path}`;
        if (!op.summary) problems.push(`${at}: no summary`);
        const success = Object.entries(op.responses).find(([code]) => code.startsWith('2'));
        // 204 (DELETE) answers without a body: nothing to describe.
        if (success?.[0] !== '204' && !success?.[1].content?.['application/json']?.schema) problems.push(`${at}: no success schema`);
        if (success?.[0] === '204' && success[1].content) problems.push(`${at}: a 204 described with a body`);
        for (const p of op.parameters ?? []) {
          if (p.in === 'path' && p.schema?.format !== 'uuid') problems.push(`${at}: path parameter ${p.name} is not format uuid`);
          if ((p.name === 'limit' || p.name === 'offset') && p.schema?.type !== 'integer') problems.push(`${at}: ${p.name} is not an integer`);
        }
        if (!path.startsWith('/v1/')) continue;
        const errors = Object.entries(op.responses).filter(([code]) => Number(code) >= 400);
        for (const code of ['401', '403', '429', '503']) if (!op.responses[code]) problems.push(`${at}: no ${code}`);
        if (errors.some(([, r]) => r.content?.['application/json']?.schema?.$ref !== '#/components/schemas/ErrorBody')) problems.push(`${at}: an error response without the error schema`);
        if (path.includes('{') && !op.responses['404']) problems.push(`${at}: no 404`);
        if (op.requestBody && !op.responses['400']) problems.push(`${at}: a body but no 400`);
        if (op.parameters?.some((p) => p.name === 'If-Match') && !op.responses['412']) problems.push(`${at}: If-Match but no 412`);
        if (op.parameters?.some((p) => p.name === 'If-Match') && !(success?.[1] as { headers?: { ETag?: unknown } } | undefined)?.headers?.ETag) problems.push(`${at}: If-Match but no ETag`);
        if (method === 'post' && !op.parameters?.some((p) => p.name === 'Idempotency-Key' && p.in === 'header')) problems.push(`${at}: no Idempotency-Key`);
        if (!op['x-permissions']?.length || !op.description?.startsWith('Permission: `')) problems.push(`${at}: no permission`);
        if (op.security?.length === 0) problems.push(`${at}: a /v1 route documented as public`);
      }
    }
    expect(problems).toEqual([]);
    expect(doc.components.schemas.ErrorBody).toBeDefined();
    expect(doc.info.description).toMatch(/procurement, sales and production/);
  });

  it('versioned documents document If-Match on every PATCH and action, and the permission shown is the one enforced', async () => {
    for (const path of ['/v1/inventory/reservations/{id}/cancel', '/v1/inventory/reservations/{id}', '/v1/sales/orders/{id}/ship', '/v1/production/work-orders/{id}/complete']) {
      const op = doc.paths[path].post ?? doc.paths[path].patch;
      expect({ path, ifMatch: op!.parameters?.some((p) => p.name === 'If-Match' && p.in === 'header') }).toEqual({ path, ifMatch: true });
    }
    // What the description says is what the guard does: a token with exactly that permission passes it, one without gets 403.
    const op = doc.paths['/v1/procurement/purchase-orders/{id}/approve'].post;
    expect(op['x-permissions']).toEqual(['procurement:approve']);
    const without = await newTenant(ctx, ['procurement:read', 'procurement:write']);
    await without.post('/v1/procurement/purchase-orders/00000000-0000-4000-8000-000000000001/approve', {}).expect(403);
    const withIt = await newTenant(ctx, ['procurement:approve']);
    await withIt.post('/v1/procurement/purchase-orders/00000000-0000-4000-8000-000000000001/approve', {}).expect(404);
  });

  it('the documented success envelopes are what the collection routes answer', async () => {
    const t = await newTenant(ctx);
    for (const [path, ops] of Object.entries(doc.paths)) {
      const get = ops.get;
      if (!get || !path.startsWith('/v1/') || path.includes('{')) continue;
      const schema = get.responses['200'].content!['application/json'].schema as { required?: string[] };
      const body = (await t.get(path).expect(200)).body;
      expect({ path, keys: Object.keys(body).sort() }).toEqual({ path, keys: [...(schema.required ?? [])].sort() });
    }
  });

  it('types every /v1 record field by field: each success answer names a closed component schema, every property typed, required listed', () => {
    const schemas = doc.components.schemas as Record<string, { type?: string; properties?: Record<string, { type?: string; $ref?: string; items?: object }>; required?: string[]; additionalProperties?: boolean }>;
    const loose: string[] = [];
    const named = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (!path.startsWith('/v1/')) continue;
      for (const [method, op] of Object.entries(ops)) {
        const success = Object.entries(op.responses).find(([code]) => code.startsWith('2'));
        if (success?.[0] === '204') continue; // no body
        const schema = success?.[1].content?.['application/json']?.schema as { properties?: { data?: { $ref?: string; items?: { $ref?: string } } } } | undefined;
        const ref = schema?.properties?.data?.$ref ?? schema?.properties?.data?.items?.$ref;
        if (!ref) loose.push(`${method.toUpperCase()} ${path}`);
        else named.add(ref.split('/').pop()!);
      }
    }
    expect(loose).toEqual([]);
    // The only fields an answer may leave out: availability's by-location fields in its by-facility list, and a new
    // webhook's secret in an Idempotency-Key replay (shown once).
    const OPTIONAL: Record<string, string[]> = { AvailabilityResponse: ['locationId', 'qtyReserved'], WebhookCreatedResponse: ['secret'] };
    for (const name of named) {
      const s = schemas[name];
      expect({ name, closed: s.additionalProperties }).toEqual({ name, closed: false });
      expect({ name, required: [...(s.required ?? [])].sort() }).toEqual({ name, required: Object.keys(s.properties ?? {}).filter((k) => !OPTIONAL[name]?.includes(k)).sort() });
      for (const [field, p] of Object.entries(s.properties ?? {})) expect({ name, field, typed: !!(p.type || p.$ref) }).toEqual({ name, field, typed: true });
    }
    expect(named.size).toBeGreaterThanOrEqual(20);
  });
});
