import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import { nativeRequire } from '../support/dist';
import { ALL, newTenant, startApp, TestContext } from '../support/app';

/**
 * A client generated from the live /openapi.json (openapi-typescript) and a small program on top of it
 * (openapi-fetch): it creates an item, adjusts its stock and reads a sales order, with the fields it uses
 * typed (a number is a number, a status one of its values). The program is type-checked strictly, then
 * run against the service. A free-form or stale description fails the compile: shown with the sales
 * order's schema made free-form. (Generated with `defaultNonNullable: false`: a request field with a
 * default is optional, as the description says.)
 */
const openapiTS = nativeRequire('openapi-typescript') as { default: (doc: object, options?: object) => Promise<unknown>; astToString: (ast: unknown) => string };

const PROGRAM = `
import createClient from 'openapi-fetch';
import type { paths } from './schema';

export async function walkthrough(baseUrl: string, token: string, orderId: string) {
  const api = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${token}\` } });
  const uoms = await api.GET('/v1/uoms', { params: { query: { limit: 500 } } });
  const ea = uoms.data!.data.find((u) => u.code === 'EA')!;
  const facility = (await api.POST('/v1/facilities', { body: { code: 'GEN', name: 'Generated client' } })).data!.data;
  const location = (await api.POST('/v1/facilities/{facilityId}/locations', { params: { path: { facilityId: facility.id } }, body: { code: 'G-1', name: 'Bin' } })).data!.data;
  const item = (await api.POST('/v1/items', { body: { itemNo: 'GEN-1', name: 'Generated', baseUomId: ea.id } })).data!.data;
  const kind: 'stock' | 'non_stock' | 'service' = item.itemKind as 'stock' | 'non_stock' | 'service';
  const adjustment = (await api.POST('/v1/inventory/adjustments', { body: { itemId: item.id, locationId: location.id, qtyDelta: 5, reason: 'generated client' } })).data!.data;
  const delta: number = adjustment.lines[0].qtyDelta;
  const txnNo: string = adjustment.txnNo;
  const order = (await api.GET('/v1/sales/orders/{id}', { params: { path: { id: orderId } } })).data!.data;
  const total: number = order.totalAmount;
  const shipped: number = order.lines[0].qtyShipped;
  const reservation: string | null = order.lines[0].reservationId;
  const version: number = order.version;
  return { itemNo: item.itemNo, kind, delta, txnNo, orderNo: order.orderNo, status: order.status, total, shipped, reservation, version };
}
`;

describe('a client generated from the OpenAPI description', () => {
  let ctx: TestContext;
  let dir: string;
  beforeAll(async () => {
    ctx = await startApp();
    // Inside node_modules/.cache, so the program resolves openapi-fetch from the project's node_modules.
    const cache = join(__dirname, '..', '..', 'node_modules', '.cache');
    mkdirSync(cache, { recursive: true });
    dir = mkdtempSync(join(cache, 'generated-client-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await ctx.close();
  });

  /** Generates schema.ts from `doc`, writes the program, and returns the type checker's errors. */
  async function compile(doc: object): Promise<string[]> {
    writeFileSync(join(dir, 'schema.ts'), openapiTS.astToString(await openapiTS.default(doc, { defaultNonNullable: false })));
    writeFileSync(join(dir, 'client.ts'), PROGRAM);
    const program = ts.createProgram([join(dir, 'client.ts')], {
      strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16, skipLibCheck: true,
    });
    return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  }

  it('type-checks the program against the live description and runs it against the service', async () => {
    const doc = (await ctx.http.get('/openapi.json').expect(200)).body;
    expect(await compile(doc)).toEqual([]);

    const t = await newTenant(ctx, ALL);
    const customer = (await t.post('/v1/sales/customers', { code: 'C', name: 'C' }).expect(201)).body.data;
    const facility = (await t.post('/v1/facilities', { code: 'SO', name: 'SO' }).expect(201)).body.data;
    const ea = (await t.get('/v1/uoms').expect(200)).body.data.find((u: { code: string }) => u.code === 'EA');
    const goods = (await t.post('/v1/items', { itemNo: 'SVC', name: 'Service', baseUomId: ea.id, itemKind: 'service' }).expect(201)).body.data;
    const order = (await t.post('/v1/sales/orders', { customerId: customer.id, facilityId: facility.id, lines: [{ itemId: goods.id, qty: 2, unitPrice: 12.5 }] }).expect(201)).body.data;

    // Run it: transpiled as it was checked, against the service.
    const js = ts.transpileModule(PROGRAM, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true } }).outputText;
    writeFileSync(join(dir, 'client.js'), js);
    const { walkthrough } = nativeRequire(join(dir, 'client.js')) as { walkthrough: (url: string, token: string, orderId: string) => Promise<Record<string, unknown>> };
    expect(await walkthrough(ctx.url, t.token, order.id)).toEqual({
      itemNo: 'GEN-1', kind: 'stock', delta: 5, txnNo: 'TX-000001', orderNo: order.orderNo, status: 'draft', total: 25, shipped: 0, reservation: null, version: 1,
    });
  });

  it('fails to compile against a description whose sales order is free-form', async () => {
    const doc = (await ctx.http.get('/openapi.json').expect(200)).body;
    doc.components.schemas.SalesOrderResponse = { type: 'object', additionalProperties: true };
    const errors = await compile(doc);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.join('\n')).toMatch(/totalAmount|unknown/);
  });
});
