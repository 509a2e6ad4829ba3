'use strict';
// npm run seed -- --items N [--tenant <uuid>]: a large synthetic data set for a tenant (default the dev
// tenant): N items ITEM-0000001…, a facility BENCH with 10 locations, and stock on up to 10,000 of them
// (one ledger transaction each), with a progress bar on stderr. Bulk SQL, consistent with what the service
// writes (balances = their ledger lines, positions, the TX number counter), checked by ledger:verify at the
// end. Connects like the service (DATABASE_URL, else the embedded PostgreSQL, which must not be running
// under the service at the same time) and applies pending migrations first. Needs the compiled service
// (npm run seed builds it).
const { parseArgs } = require('node:util');
const { join } = require('node:path');

const DIST = join(__dirname, '..', 'dist');
const MAX_ITEMS = 10_000_000;
const USAGE = 'usage: npm run seed -- --items <1..10000000> [--tenant <uuid>]';

async function main() {
  let values;
  try {
    ({ values } = parseArgs({ options: { items: { type: 'string' }, tenant: { type: 'string' } }, strict: true }));
  } catch (err) {
    return fail(`${err.message}\n${USAGE}`);
  }
  const items = Number(values.items);
  if (!Number.isInteger(items) || items < 1 || items > MAX_ITEMS) return fail(`--items must be a whole number from 1 to ${MAX_ITEMS}\n${USAGE}`);
  const tenant = values.tenant ?? process.env.DEV_TENANT_ID ?? '00000000-0000-4000-8000-000000000001';
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(tenant)) return fail(`--tenant must be a UUID\n${USAGE}`);
  // Stock on up to 10,000 balances, a multiple of the 10 locations, at most 10 per item.
  const balances = Math.max(10, Math.min(10_000, Math.floor(items / 10) * 10 || 10, items * 10));

  const { withDatabase } = require(join(DIST, 'database', 'connect.js'));
  const { runMigrations } = require(join(DIST, 'database', 'migrate.js'));
  const { provisionTenant } = require(join(DIST, 'tenancy', 'tenant-provisioner.js'));
  const { seedBase, verify } = require(join(__dirname, '..', 'bench', 'seed.js'));
  const log = (line) => process.stderr.write(`${line}\n`);

  await withDatabase(async (dataSource) => {
    await runMigrations(dataSource);
    const runner = dataSource.createQueryRunner();
    const pg = await runner.connect();
    try {
      // Bulk inserts of known-good rows: skip per-row triggers where allowed (superuser), as the benchmark does.
      await pg.query(`SET session_replication_role = replica`).catch(() => undefined);
      await provisionTenant((sql, params) => pg.query(sql, params), tenant);
      const taken = await pg.query(`SELECT 1 FROM facilities WHERE tenant_id = $1 AND code = 'BENCH'`, [tenant]);
      if (taken.rows.length) throw new Error(`tenant ${tenant} is already seeded (it has facility BENCH); use another --tenant`);
      log(`seeding tenant ${tenant}: ${items.toLocaleString('en-US')} items, ${balances.toLocaleString('en-US')} balances`);
      await seedBase(pg, { tenant, items, balances, hot: 0, by: 'seed' });
      const { checks, violations } = await verify(pg, tenant);
      if (violations.length) throw new Error(`ledger:verify found ${violations.length} violated invariants: ${JSON.stringify(violations.slice(0, 3))}`);
      process.stdout.write(`${JSON.stringify({ tenant, items, balances, invariants: `${checks} checked, all hold` })}\n`);
    } finally {
      await pg.query(`RESET session_replication_role`).catch(() => undefined);
      await runner.release();
    }
  }, log);
}

function fail(message) {
  process.stderr.write(`${message}\n`);
  process.exitCode = 2;
}

main().catch((err) => {
  process.stderr.write(`seed: ${err.message}\n`);
  process.exit(1);
});
