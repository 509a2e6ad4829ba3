#!/usr/bin/env node
// Scale benchmark: seeds one tenant with a million items and a million ledger lines, then measures
// the hot read paths and posting throughput over HTTP against the compiled service (dev auth mode).
//
//   npm run bench                          # embedded PostgreSQL in a temp folder
//   BENCH_DATABASE_URL=postgres://… npm run bench
//   BENCH_ITEMS=200000 BENCH_LINES=200000 npm run bench   # smaller run
//
// Prints latency percentiles per endpoint and adjustments per second. Nothing is asserted: the
// figures are for reading and comparing between changes.
'use strict';
const { spawn } = require('node:child_process');
const { mkdtempSync, rmSync } = require('node:fs');
const { createServer } = require('node:net');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { Client } = require('pg');

const ROOT = join(__dirname, '..');
const ITEMS = Number(process.env.BENCH_ITEMS ?? 1_000_000);
const LINES = Number(process.env.BENCH_LINES ?? 1_000_000);
const HOT_ITEMS = 1000;
const LOCATIONS = 50;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 50);
const TENANT = '00000000-0000-4000-8000-00000000be01';

const log = (line) => process.stdout.write(`${line}\n`);

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function database() {
  if (process.env.BENCH_DATABASE_URL) return { url: process.env.BENCH_DATABASE_URL, stop: async () => undefined };
  const { startEmbeddedPostgres } = require(join(ROOT, 'dist/database/embedded-postgres.js'));
  const dir = mkdtempSync(join(tmpdir(), 'inventory-bench-pg-'));
  const db = await startEmbeddedPostgres({ dir, port: await freePort(), database: 'inventory_bench', fast: true });
  return { url: db.url, stop: async () => (await db.stop(), rmSync(dir, { recursive: true, force: true })) };
}

async function startService(databaseUrl) {
  const port = await freePort();
  const child = spawn(process.execPath, [join(ROOT, 'dist/main.js')], {
    env: {
      PATH: process.env.PATH, DATABASE_URL: databaseUrl, PORT: String(port), HOST: '127.0.0.1', AUTH_MODE: 'dev',
      DEV_TENANT_ID: TENANT, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0', DB_POOL_SIZE: '20', NODE_ENV: 'development',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      if (out.includes('listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`service exited with ${code}`)));
  });
  return { base: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
}

async function seed(url, base) {
  // First request provisions the tenant (UOMs, statuses); the rest is bulk SQL as the schema owner.
  const uoms = await (await fetch(`${base}/v1/uoms`)).json();
  const ea = uoms.data.find((u) => u.code === 'EA').id;
  const statuses = await (await fetch(`${base}/v1/inventory/statuses`)).json();
  const available = statuses.data.find((s) => s.code === 'AVAILABLE').id;
  const pg = new Client({ connectionString: url });
  await pg.connect();
  const t0 = Date.now();
  await pg.query(
    `INSERT INTO items (tenant_id, item_no, name, base_uom_id, created_by, updated_by)
     SELECT $1, 'ITEM-' || lpad(g::text, 7, '0'), 'Widget ' || md5(g::text), $2, 'bench', 'bench'
       FROM generate_series(1, $3) g`,
    [TENANT, ea, ITEMS],
  );
  log(`seeded ${ITEMS} items in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const [{ id: facility }] = (
    await pg.query(`INSERT INTO facilities (tenant_id, code, name, created_by, updated_by) VALUES ($1, 'BENCH', 'Bench', 'bench', 'bench') RETURNING id`, [TENANT])
  ).rows;
  await pg.query(
    `INSERT INTO locations (tenant_id, facility_id, code, name, path, created_by, updated_by)
     SELECT $1, $2, 'L' || g, 'Location ' || g, 'L' || g, 'bench', 'bench' FROM generate_series(1, $3) g`,
    [TENANT, facility, LOCATIONS],
  );
  const t1 = Date.now();
  // One transaction per 10 lines; lines spread over the hot items and locations, all inbound.
  await pg.query(
    `INSERT INTO ledger_transactions (tenant_id, id, txn_no, type, posted_at, posted_by, reason)
     SELECT $1, gen_random_uuid(), 'TX-' || lpad(g::text, 7, '0'), 'adjustment', now() - (g || ' seconds')::interval, 'bench', 'seed'
       FROM generate_series(1, $2) g`,
    [TENANT, Math.ceil(LINES / 10)],
  );
  await pg.query(
    `WITH hot AS (SELECT id, row_number() OVER (ORDER BY item_no) AS n FROM items WHERE tenant_id = $1 ORDER BY item_no LIMIT $3),
          loc AS (SELECT id, row_number() OVER (ORDER BY code) AS n FROM locations WHERE tenant_id = $1),
          txn AS (SELECT id, row_number() OVER (ORDER BY txn_no) AS n FROM ledger_transactions WHERE tenant_id = $1)
     INSERT INTO ledger_lines (tenant_id, transaction_id, line_no, item_id, facility_id, location_id, status_id, qty_delta)
     SELECT $1, txn.id, (g % 10) + 1, hot.id, $4, loc.id, $5, 1
       FROM generate_series(0, $2 - 1) g
       JOIN txn ON txn.n = g / 10 + 1
       JOIN hot ON hot.n = g % $3 + 1
       JOIN loc ON loc.n = (g / $3) % $6 + 1`,
    [TENANT, LINES, HOT_ITEMS, facility, available, LOCATIONS],
  );
  await pg.query(
    `INSERT INTO balances (tenant_id, item_id, facility_id, location_id, status_id, qty_on_hand)
     SELECT tenant_id, item_id, facility_id, location_id, status_id, sum(qty_delta) FROM ledger_lines
      WHERE tenant_id = $1 GROUP BY tenant_id, item_id, facility_id, location_id, status_id`,
    [TENANT],
  );
  await pg.query(
    `INSERT INTO inventory_positions (tenant_id, item_id, facility_id, qty_available_on_hand)
     SELECT tenant_id, item_id, facility_id, sum(qty_on_hand) FROM balances WHERE tenant_id = $1 GROUP BY tenant_id, item_id, facility_id`,
    [TENANT],
  );
  await pg.query(`INSERT INTO document_sequences (tenant_id, prefix, last_value) VALUES ($1, 'TX', $2)
                  ON CONFLICT (tenant_id, prefix) DO UPDATE SET last_value = EXCLUDED.last_value`, [TENANT, Math.ceil(LINES / 10)]);
  await pg.query('ANALYZE');
  log(`seeded ${LINES} ledger lines in ${((Date.now() - t1) / 1000).toFixed(1)} s`);
  const hot = (await pg.query(`SELECT id FROM items WHERE tenant_id = $1 ORDER BY item_no LIMIT 3`, [TENANT])).rows.map((r) => r.id);
  const location = (await pg.query(`SELECT id FROM locations WHERE tenant_id = $1 ORDER BY code LIMIT 1`, [TENANT])).rows[0].id;
  await pg.end();
  return { facility, hot, location };
}

async function timeGet(base, path) {
  const times = [];
  let status;
  for (let i = 0; i < SAMPLES; i++) {
    const t = process.hrtime.bigint();
    const res = await fetch(base + path);
    status = res.status;
    await res.arrayBuffer();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  const pct = (p) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))].toFixed(1);
  return { path, status, p50: pct(50), p95: pct(95), max: times[times.length - 1].toFixed(1) };
}

async function postingThroughput(base, itemId, locationId, seconds = 10, concurrency = 20) {
  const until = Date.now() + seconds * 1000;
  let ok = 0;
  let other = 0;
  const worker = async () => {
    while (Date.now() < until) {
      const res = await fetch(`${base}/v1/inventory/adjustments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ itemId, locationId, qtyDelta: 1, reason: 'bench' }),
      });
      await res.arrayBuffer();
      if (res.status === 201) ok++;
      else other++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { ok, other, perSecond: (ok / seconds).toFixed(0) };
}

async function main() {
  const db = await database();
  const service = await startService(db.url);
  try {
    const { facility, hot, location } = await seed(db.url, service.base);
    const paths = [
      '/v1/items?q=ITEM-0999',
      '/v1/items?q=widget%20ab',
      '/v1/items',
      `/v1/inventory/transactions?itemId=${hot[0]}`,
      `/v1/inventory/transactions?facilityId=${facility}&limit=50`,
      '/v1/inventory/transactions?type=adjustment&offset=500000&limit=50',
      `/v1/inventory/availability?itemId=${hot[1]}`,
      `/v1/inventory/availability?groupBy=facility&itemId=${hot[1]}`,
      `/v1/inventory/balances?itemId=${hot[2]}`,
    ];
    log(`\nGET latency over ${SAMPLES} sequential requests (ms); ${ITEMS} items, ${LINES} ledger lines`);
    log('p50'.padStart(8) + 'p95'.padStart(8) + 'max'.padStart(8) + '  status  path');
    for (const path of paths) {
      const r = await timeGet(service.base, path);
      log(`${r.p50.padStart(8)}${r.p95.padStart(8)}${r.max.padStart(8)}  ${r.status}     ${r.path}`);
    }
    const one = await postingThroughput(service.base, hot[0], location);
    log(`\nadjustments, 20 concurrent clients, one hot balance: ${one.perSecond}/s (${one.ok} ok, ${one.other} other)`);
  } finally {
    service.stop();
    await db.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err.stack ?? err}\n`);
  process.exit(1);
});
