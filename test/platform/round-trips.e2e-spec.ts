import { nativeRequire } from '../support/dist';
import { newTenant, startApp, TestContext } from '../support/app';
import { adjust, inventoryFixture } from '../support/fixtures';

/** Every statement the service sends, by counting node-postgres Client.query calls in this process. */
const { Client } = nativeRequire('pg') as { Client: { prototype: { query: (...args: unknown[]) => unknown } } };

/**
 * Round trips per request on the hot paths (the request-path budget): opening a unit of work is one
 * round trip (BEGIN with the tenant and role settings), closing it one (COMMIT), and the work between
 * is as few statements as the request needs. A change that adds a statement to these paths fails here.
 */
describe('round trips per request', () => {
  let ctx: TestContext;
  const sent: string[] = [];
  const original = Client.prototype.query;
  beforeAll(async () => {
    ctx = await startApp();
    Client.prototype.query = function (this: unknown, ...args: unknown[]) {
      const q = args[0] as string | { text: string };
      sent.push(typeof q === 'string' ? q : q.text);
      return original.apply(this, args);
    };
  });
  afterAll(async () => {
    Client.prototype.query = original;
    await ctx.close();
  });

  async function statementsOf(request: () => Promise<unknown>): Promise<string[]> {
    sent.length = 0;
    await request();
    return [...sent];
  }

  it('GET /v1/items/{id}: open, one read with all children, close', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await t.patch(`/v1/items/${f.item.id}`, { identifiers: [{ type: 'sku', value: `S-${f.item.id}` }], attributes: [{ name: 'colour', value: 'red' }] }).expect(200);
    const statements = await statementsOf(() => t.get(`/v1/items/${f.item.id}`).expect(200));
    expect(statements).toHaveLength(3);
    expect(statements[0]).toMatch(/^BEGIN; SELECT set_config\('role'/);
    expect(statements[2]).toBe('COMMIT');
  });

  it('POST /v1/inventory/adjustments (inbound, untracked): seven statements, the TX number taken in the last before COMMIT', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5 });
    const statements = await statementsOf(() => adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 3 }));
    expect(statements).toHaveLength(7);
    expect(statements[statements.length - 2]).toMatch(/document_sequences[\s\S]*INSERT INTO ledger_transactions[\s\S]*INSERT INTO ledger_lines/);
    expect(statements.filter((s) => /SAVEPOINT/i.test(s))).toEqual([]);
  });

  it('an outbound adjustment adds only the look-up of expired holds in its way', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 5 });
    const statements = await statementsOf(() => adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: -2 }));
    expect(statements).toHaveLength(8);
  });
});
