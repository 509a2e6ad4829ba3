import type { DataSource, EntityMetadata } from 'typeorm';
import { startApp, TestContext } from '../support/app';
import { fromDist } from '../support/dist';

type Cls = { prototype: object; name: string };
const sales = fromDist<Record<string, Cls>>('sales/sales.dto');
const responses = fromDist<Record<string, Cls>>('sales/sales.responses');
// @nestjs/swagger's DECORATORS.API_MODEL_PROPERTIES_ARRAY (not exported by the package).
const DECORATORS = { API_MODEL_PROPERTIES_ARRAY: 'swagger/apiModelPropertiesArray' };

// The service's realm's Reflect (reflect-metadata is loaded there, not in the test's sandbox).
const NativeReflect = (responses.SalesOrderResponse.constructor as FunctionConstructor)('return Reflect')() as { getMetadata(key: string, target: object): unknown };

/** The properties a class declares to OpenAPI (its @ApiProperty / response decorators), inherited ones too. */
const declared = (cls: Cls): string[] =>
  ((NativeReflect.getMetadata(DECORATORS.API_MODEL_PROPERTIES_ARRAY, cls.prototype) as string[] | undefined) ?? []).map((p) => p.replace(/^:/, '')).sort();
const columns = (meta: EntityMetadata, internal: string[] = []) => meta.columns.map((c) => c.propertyName).filter((p) => p !== 'tenantId' && !internal.includes(p)).sort();
const without = (list: string[], drop: string[]) => list.filter((p) => !drop.includes(p));

/**
 * A resource's fields live in four places an extender edits (docs/extending.md, "Add a field to sales
 * orders"): the migration, the entity, the DTO and the response class. The entities test ties the first
 * two together; this ties the entity to the other two, so forgetting any of them fails here (the service
 * itself copies fields generically: the body's fields into the entity, every column into the answer).
 */
describe('resource fields: entity, DTOs and response class agree', () => {
  let ctx: TestContext;
  let meta: (name: string) => EntityMetadata;
  beforeAll(async () => {
    ctx = await startApp();
    const db: DataSource = ctx.db;
    meta = (table) => db.entityMetadatas.find((m) => m.tableName === table)!;
  });
  afterAll(() => ctx.close());

  /** Columns the service sets itself: never in a request body. */
  const SERVER_SET = ['id', 'orderNo', 'status', 'totalAmount', 'version', 'createdBy', 'updatedBy', 'createdAt', 'updatedAt'];

  it('sales orders: every column is answered (SalesOrderResponse) and every column a client sets is in both DTOs', () => {
    const order = columns(meta('sales_orders'));
    expect(without(declared(responses.SalesOrderResponse), ['lines'])).toEqual(order);
    const writable = without(order, SERVER_SET);
    expect(without(declared(sales.CreateSalesOrderDto), ['lines'])).toEqual(writable);
    expect(without(declared(sales.UpdateSalesOrderDto), ['lines'])).toEqual(writable);
  });

  it('sales order lines: every column but the internal ones is answered (SalesOrderLineResponse)', () => {
    const line = columns(meta('sales_order_lines'), ['salesOrderId', 'qtyBase', 'qtyShippedBase']);
    expect(declared(responses.SalesOrderLineResponse)).toEqual(line);
  });

  it('the check can fail: a column missing from a class is found', () => {
    const order = columns(meta('sales_orders'));
    expect(order).toContain('notes');
    expect(without(declared(responses.SalesOrderResponse), ['notes', 'lines'])).not.toEqual(order);
  });
});
