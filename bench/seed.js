'use strict';
// Bulk seeding by SQL as the database superuser (HTTP would take hours for a million ledger lines),
// consistent with what the service itself would have written: every balance equals the sum of its
// ledger lines, every position the sum of its Available balances, and the TX document sequence is
// the number of transactions. Also the invariant check (`ledger:verify`) and the row counts the
// write scenarios are checked against.
const { createHash } = require('node:crypto');
const { join } = require('node:path');
const { Client } = require('pg');

const ROOT = join(__dirname, '..');
const LOCATIONS = 10; // balance k is item k / LOCATIONS + 1 at location k % LOCATIONS + 1
const SEED_QTY = 1000;
const HOT_QTY = 1_000_000;
const CHUNK_ITEMS = 10_000;
const CHUNK_LINES = 50_000;

const itemNo = (n) => `ITEM-${String(n).padStart(7, '0')}`;
const itemName = (n) => `Widget ${createHash('md5').update(String(n)).digest('hex')}`;
// A transaction's id, derived from its number (a valid v4-shaped UUID), so lines can name it without a join.
const TXID = (n) => `overlay(overlay(md5($1::uuid::text || ':tx:' || (${n})) placing '4' from 13) placing '8' from 17)::uuid`;

/** One progress line (stderr), redrawn in place on a terminal; on a pipe only every quarter. */
function progress(label, total) {
  const out = process.stderr;
  const tty = out.isTTY;
  const started = Date.now();
  let shownQuarter = -1;
  const draw = (done) => {
    const share = total ? done / total : 1;
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    const text = `  ${label.padEnd(22)} [${'#'.repeat(Math.round(share * 30)).padEnd(30, '.')}] ${String(Math.floor(share * 100)).padStart(3)}%  ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')}  ${secs} s`;
    if (tty) out.write(`\r${text}${done >= total ? '\n' : ''}`);
    else if (Math.floor(share * 4) > shownQuarter || done >= total) {
      shownQuarter = Math.floor(share * 4);
      out.write(`${text}\n`);
    }
  };
  draw(0);
  return draw;
}

async function connect(url) {
  const pg = new Client({ connectionString: url });
  await pg.connect();
  // Bulk inserts of known-good rows: skip per-row foreign-key triggers (superuser only; optional).
  await pg.query(`SET session_replication_role = replica`).catch(() => undefined);
  return pg;
}

const one = async (pg, sql, params) => (await pg.query(sql, params)).rows[0];

/**
 * Items, one facility with LOCATIONS locations, `balances` balances each with one seed ledger line
 * (one transaction each). The hot balances, with more stock, are location 1 of the first `hot` items.
 * The tenant must exist (its first HTTP request provisions it).
 */
async function seedBase(pg, { tenant, items, balances, hot, by = 'bench', analyze = true }) {
  if (balances % LOCATIONS || balances / LOCATIONS > items) throw new Error(`balances must be a multiple of ${LOCATIONS} and at most items × ${LOCATIONS}`);
  const { id: ea } = await one(pg, `SELECT id FROM uoms WHERE tenant_id = $1 AND code = 'EA'`, [tenant]);
  const { id: status } = await one(pg, `SELECT id FROM stock_statuses WHERE tenant_id = $1 AND code = 'AVAILABLE'`, [tenant]);

  const bar = progress('items', items);
  for (let from = 1; from <= items; from += CHUNK_ITEMS) {
    const to = Math.min(items, from + CHUNK_ITEMS - 1);
    await pg.query(
      `INSERT INTO items (tenant_id, item_no, name, base_uom_id, created_by, updated_by)
       SELECT $1, 'ITEM-' || lpad(g::text, greatest(7, length(g::text)), '0'), 'Widget ' || md5(g::text), $2, $5, $5
         FROM generate_series($3::int, $4::int) g`,
      [tenant, ea, from, to, by],
    );
    bar(to);
  }
  const { id: facility } = await one(
    pg,
    `INSERT INTO facilities (tenant_id, code, name, created_by, updated_by) VALUES ($1, 'BENCH', 'Bench warehouse', $2, $2) RETURNING id`,
    [tenant, by],
  );
  await pg.query(
    `INSERT INTO locations (tenant_id, facility_id, code, name, path, created_by, updated_by)
     SELECT $1, $2, 'L' || lpad(g::text, 2, '0'), 'Location ' || g, 'L' || lpad(g::text, 2, '0'), $4, $4
       FROM generate_series(1, $3) g`,
    [tenant, facility, LOCATIONS, by],
  );
  const keys = (
    await pg.query(
      `SELECT k, i.id AS item_id, l.id AS location_id
         FROM generate_series(0, $2 - 1) k
         JOIN items i ON i.tenant_id = $1 AND i.item_no = 'ITEM-' || lpad((k / $3 + 1)::text, greatest(7, length((k / $3 + 1)::text)), '0')
         JOIN locations l ON l.tenant_id = $1 AND l.code = 'L' || lpad((k % $3 + 1)::text, 2, '0')
        ORDER BY k`,
      [tenant, balances, LOCATIONS],
    )
  ).rows.map((r) => ({ itemId: r.item_id, locationId: r.location_id }));
  const hotKeys = Array.from({ length: hot }, (_, i) => i * LOCATIONS);
  await pg.query(`CREATE TEMP TABLE bench_keys (k int PRIMARY KEY, item_id uuid, location_id uuid, qty numeric)`);
  await pg.query(
    `INSERT INTO bench_keys SELECT k - 1, item_id, location_id, CASE WHEN k - 1 = ANY($3::int[]) THEN $4::numeric ELSE $5::numeric END
       FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS u(item_id, location_id, k)`,
    [keys.map((k) => k.itemId), keys.map((k) => k.locationId), hotKeys, HOT_QTY, SEED_QTY],
  );
  const ctx = { tenant, facility, status, balances, keys, hot: hotKeys.map((k) => keys[k]), items, analyze };
  // One transaction per balance, one line each: its seed stock.
  await appendLines(pg, ctx, 'seed ledger lines', balances, [{ key: 'i - 1', qty: 'b.qty' }]);
  return ctx;
}

/**
 * Appends ledger transactions until the tenant's ledger has `target` lines: two lines each, +1 on one
 * balance and −1 on the next, so every balance keeps about its stock (with an odd count, the last
 * transaction has only its +1 line).
 */
async function growLedger(pg, ctx, target) {
  const missing = target - (await counts(pg, ctx.tenant)).lines;
  if (missing <= 0) return;
  const B = ctx.balances;
  await appendLines(pg, ctx, 'ledger lines', missing, [
    { key: `i % ${B}`, qty: '1' },
    { key: `(i + 1) % ${B}`, qty: '-1', unlessLast: missing % 2 === 1 },
  ]);
}

/**
 * Appends `count` ledger lines in transactions numbered after the tenant's TX sequence, `lines.length`
 * lines per transaction i = 1, 2, …: line j on balance key `lines[j].key` (SQL in i) with qty_delta
 * `lines[j].qty` (SQL; `b.qty` is the key's seed quantity). Then re-syncs balances and positions.
 */
async function appendLines(pg, ctx, label, count, lines) {
  const { tenant, facility, status } = ctx;
  const { last } = await one(pg, `SELECT coalesce(max(last_value), 0)::int AS last FROM document_sequences WHERE tenant_id = $1 AND prefix = 'TX'`, [tenant]);
  const txns = Math.ceil(count / lines.length);
  const perChunk = Math.floor(CHUNK_LINES / lines.length);
  const select = (line, j) => `
    SELECT $1::uuid, ${TXID('$2::int + i')}, ${j + 1}, b.item_id, $5::uuid, b.location_id, $6::uuid, ${line.qty}
      FROM generate_series($3::int, $4::int) i JOIN bench_keys b ON b.k = ${line.key}
     ${line.unlessLast ? `WHERE i < ${txns}` : ''}`;
  const bar = progress(label, count);
  for (let from = 1; from <= txns; from += perChunk) {
    const to = Math.min(txns, from + perChunk - 1);
    await pg.query('BEGIN');
    await pg.query(
      `INSERT INTO ledger_transactions (tenant_id, id, txn_no, type, posted_at, posted_by, reason, source_type)
       SELECT $1::uuid, ${TXID('$2::int + i')}, 'TX-' || lpad(($2::int + i)::text, greatest(6, length(($2::int + i)::text)), '0'), 'adjustment',
              now() - make_interval(secs => $5::int + 1 - i), 'bench-seed', 'bench seed', 'adjustment'
         FROM generate_series($3::int, $4::int) i`,
      [tenant, last, from, to, txns],
    );
    await pg.query(
      `INSERT INTO ledger_lines (tenant_id, transaction_id, line_no, item_id, facility_id, location_id, status_id, qty_delta)
       ${lines.map(select).join(' UNION ALL ')}`,
      [tenant, last, from, to, facility, status],
    );
    await pg.query('COMMIT');
    bar(Math.min(count, to * lines.length));
  }
  await pg.query(
    `INSERT INTO document_sequences (tenant_id, prefix, last_value) VALUES ($1, 'TX', $2)
     ON CONFLICT (tenant_id, prefix) DO UPDATE SET last_value = EXCLUDED.last_value`,
    [tenant, last + txns],
  );
  await syncCounters(pg, tenant);
  // `analyze: false` (the never-analyzed scenario's database): freshly loaded, no statistics, no VACUUM either.
  if (ctx.analyze !== false) await pg.query(`VACUUM ANALYZE items, ledger_transactions, ledger_lines, balances, inventory_positions`);
  await pg.query(`CHECKPOINT`).catch(() => undefined);
}

/** Balances := the sums of their ledger lines; positions' on hand := their Available balances. */
async function syncCounters(pg, tenant) {
  await pg.query(
    `INSERT INTO balances (tenant_id, item_id, facility_id, location_id, lot_id, status_id, qty_on_hand)
     SELECT tenant_id, item_id, facility_id, location_id, lot_id, status_id, sum(qty_delta) FROM ledger_lines
      WHERE tenant_id = $1 GROUP BY tenant_id, item_id, facility_id, location_id, lot_id, status_id
     ON CONFLICT ON CONSTRAINT balances_key DO UPDATE SET qty_on_hand = EXCLUDED.qty_on_hand, updated_at = now()
      WHERE balances.qty_on_hand <> EXCLUDED.qty_on_hand`,
    [tenant],
  );
  await pg.query(
    `INSERT INTO inventory_positions (tenant_id, item_id, facility_id, qty_available_on_hand)
     SELECT b.tenant_id, b.item_id, b.facility_id, sum(b.qty_on_hand) FROM balances b
       JOIN stock_statuses s ON s.tenant_id = b.tenant_id AND s.id = b.status_id AND s.is_available
      WHERE b.tenant_id = $1 GROUP BY b.tenant_id, b.item_id, b.facility_id
     ON CONFLICT (tenant_id, item_id, facility_id) DO UPDATE SET qty_available_on_hand = EXCLUDED.qty_available_on_hand, updated_at = now()
      WHERE inventory_positions.qty_available_on_hand <> EXCLUDED.qty_available_on_hand`,
    [tenant],
  );
}

/** The tenant's row counts the write scenarios are checked against. */
async function counts(pg, tenant) {
  const r = await one(
    pg,
    `SELECT (SELECT count(*) FROM ledger_transactions WHERE tenant_id = $1)::int AS txns,
            (SELECT count(*) FROM ledger_lines WHERE tenant_id = $1)::int AS lines,
            (SELECT count(*) FROM reservations WHERE tenant_id = $1)::int AS reservations,
            (SELECT count(*) FROM reservations WHERE tenant_id = $1 AND status = 'cancelled')::int AS cancelled`,
    [tenant],
  );
  return r;
}

/** Every ledger invariant (the checks of `npm run ledger:verify`, from dist/), for the tenant, in one snapshot. */
async function verify(pg, tenant) {
  const { verifyLedger, INVARIANT_CHECKS } = require(join(ROOT, 'dist/inventory/ledger/verify.sql.js'));
  await pg.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    const violations = await verifyLedger(async (sql, params) => (await pg.query(sql, params)).rows, tenant);
    return { checks: INVARIANT_CHECKS.length, violations: violations.map((v) => ({ ...v, count: v.rows.length, rows: v.rows.slice(0, 20) })) };
  } finally {
    await pg.query('COMMIT');
  }
}

module.exports = { connect, seedBase, growLedger, counts, verify, itemNo, itemName, LOCATIONS };
