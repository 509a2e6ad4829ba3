import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type * as Verify from '../../src/inventory/ledger/verify.sql';
import { startApp, TestContext, testDatabaseUrl } from '../support/app';
import { fromDist } from '../support/dist';

const { INVARIANT_CHECKS } = fromDist<typeof Verify>('inventory/ledger/verify.sql');

const run = promisify(execFile);
const seed = (args: string[]) =>
  run(process.execPath, [join(__dirname, '..', '..', 'scripts', 'seed.js'), ...args], {
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: testDatabaseUrl() }, timeout: 120_000,
  }).then(({ stdout, stderr }) => ({ code: 0, stdout, stderr }), (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }));

/** `npm run seed -- --items N`: a large synthetic set the service then serves, with a whole ledger. */
describe('npm run seed', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  it('loads N items with stock for a tenant that has never made a request, with a progress bar; the service serves them', async () => {
    const tenant = randomUUID();
    const out = await seed(['--items', '230', '--tenant', tenant]);
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({ tenant, items: 230, balances: 230, invariants: `${INVARIANT_CHECKS.length} checked, all hold` });
    expect(out.stderr).toMatch(/items\s+\[#{30}\] 100%\s+230\/230/);

    const auth = { Authorization: `Bearer ${await ctx.idp.token({ tenantId: tenant, permissions: ['catalog:read', 'inventory:read'] })}` };
    expect((await ctx.http.get('/v1/items?limit=1').set(auth).expect(200)).body.count).toBe(230);
    expect((await ctx.http.get('/v1/items?q=ITEM-0000230').set(auth).expect(200)).body.data.map((i: { itemNo: string }) => i.itemNo)).toEqual(['ITEM-0000230']);
    expect((await ctx.http.get('/v1/inventory/balances?limit=1').set(auth).expect(200)).body.count).toBe(230);
    expect((await ctx.http.get('/v1/inventory/transactions?limit=1').set(auth).expect(200)).body.count).toBe(230);
    // The seeded tenant works like any other: a posting on top of the seed.
    const [balance] = (await ctx.http.get('/v1/inventory/balances?limit=1').set(auth).expect(200)).body.data;
    const writer = { Authorization: `Bearer ${await ctx.idp.token({ tenantId: tenant, permissions: ['inventory:write'] })}` };
    await ctx.http.post('/v1/inventory/adjustments').set(writer).send({ itemId: balance.itemId, locationId: balance.locationId, qtyDelta: -1, reason: 'check' }).expect(201);

    // Twice on one tenant: refused, nothing changed.
    const again = await seed(['--items', '10', '--tenant', tenant]);
    expect(again).toMatchObject({ code: 1, stderr: expect.stringMatching(/already seeded/) });
    expect((await ctx.http.get('/v1/items?limit=1').set(auth).expect(200)).body.count).toBe(230);
  });

  it('bad arguments: exit 2 with the usage', async () => {
    for (const args of [['--items', '0'], ['--items', 'many'], ['--items', '5', '--tenant', 'acme'], ['--bogus']]) {
      expect(await seed(args)).toMatchObject({ code: 2, stderr: expect.stringMatching(/usage: npm run seed -- --items/) });
    }
  });
});
