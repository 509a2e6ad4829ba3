#!/usr/bin/env node
'use strict';
// The service benchmark (`npm run bench` = `npm run build && node bench/run.js`): the compiled service in
// production mode (NODE_ENV=production, AUTH_MODE=jwt against a loopback identity provider, no rate limit)
// on an embedded PostgreSQL (or BENCH_DATABASE_URL), seeded by SQL, driven over HTTP with autocannon.
// Both HTTP platforms are measured in one run (BENCH_PLATFORMS, default express,fastify): one service process
// each, every scenario run on one then the other, back to back, on the same data (the three the platforms
// are compared on — item read, spread and hot adjustments — after an unrecorded run on each, then in
// alternating order). Prints one table (also bench/results.json) with the targets of the issue as PASS/MISS. Exit 0 unless the harness itself fails. See bench/README.md for the settings and what each scenario does.
const { spawn } = require('node:child_process');
const { mkdtempSync, openSync, readFileSync, rmSync } = require('node:fs');
const { createServer } = require('node:net');
const { cpus, loadavg, tmpdir } = require('node:os');
const { join } = require('node:path');
const { randomBytes, randomUUID } = require('node:crypto');
const { startIdp } = require('./idp');
const { connect, counts, growLedger, seedBase, verify } = require('./seed');
const { cpuMs, drive, peakRss, postmasterOf, rssSampler, scenarios } = require('./scenarios');
const { bareHttp, findPgbench, pgbench } = require('./baselines');
const { report } = require('./report');

const ROOT = join(__dirname, '..');
const env = process.env;
const QUICK = env.BENCH_QUICK === '1';
const int = (name, fallback) => (env[name] ? Number.parseInt(env[name], 10) : fallback);
const config = {
  quick: QUICK,
  seconds: Number(env.BENCH_DURATION ?? (QUICK ? 2 : 10)),
  warmup: Number(env.BENCH_WARMUP ?? (QUICK ? 0.5 : 2)),
  connections: int('BENCH_CONNECTIONS', 32),
  items: int('BENCH_ITEMS', QUICK ? 5_000 : 100_000),
  balances: int('BENCH_BALANCES', QUICK ? 1_000 : 10_000),
  lines: int('BENCH_LINES', QUICK ? 50_000 : 1_000_000),
  hot: 5,
  database: env.BENCH_DATABASE_URL ? 'BENCH_DATABASE_URL' : 'embedded',
  // The embedded PostgreSQL flushes its commits (fsync, synchronous_commit, full_page_writes on), as a
  // production ledger does. BENCH_PG_UNSAFE_FAST=1 turns the three off: quicker, NOT DURABLE, never a headline.
  unsafeFast: env.BENCH_PG_UNSAFE_FAST === '1' && !env.BENCH_DATABASE_URL,
  // the alternated comparisons' rounds: (events on, off), (webhook on, off), (never analyzed, analyzed again)
  eventsRounds: int('BENCH_EVENTS_ROUNDS', 2),
  // the item read's runs per platform (in alternating order when both platforms are measured)
  platformRounds: int('BENCH_PLATFORM_ROUNDS', 2),
};
if (!(config.platformRounds >= 1)) throw new Error(`BENCH_PLATFORM_ROUNDS: at least 1 (got ${env.BENCH_PLATFORM_ROUNDS})`);
config.pgbenchScale = int('BENCH_PGBENCH_SCALE', config.connections);
// BENCH_ONLY=adjustHot,itemGet runs only those scenarios (keys as in results.json); the baselines always run.
const ONLY = env.BENCH_ONLY ? new Set(env.BENCH_ONLY.split(',').map((s) => s.trim()).filter(Boolean)) : null;
const wanted = (key) => !ONLY || ONLY.has(key);
// BENCH_PLATFORMS=fastify measures one platform only; the default, both (CONTRACT §10).
const PLATFORMS = (env.BENCH_PLATFORMS ?? 'express,fastify').split(',').map((s) => s.trim()).filter(Boolean);
for (const p of PLATFORMS) if (!['express', 'fastify'].includes(p)) throw new Error(`BENCH_PLATFORMS: unknown platform ${p}`);
// BENCH_STATEMENTS=1 (embedded database only): pg_stat_statements on; each scenario prints its top statements.
const STATEMENTS = env.BENCH_STATEMENTS === '1' && !env.BENCH_DATABASE_URL;
// BENCH_WAL=1 (embedded database only): each write scenario prints the WAL it wrote by relation and record
// type, with the full-page images among it (pg_walinspect's pg_get_wal_block_info, PostgreSQL 16+).
const WAL_PROFILE = env.BENCH_WAL === '1' && !env.BENCH_DATABASE_URL;
const PERMISSIONS = ['catalog:read', 'catalog:write', 'inventory:read', 'inventory:write', 'sales:read', 'sales:write', 'events:read', 'events:write', 'procurement:read', 'procurement:write', 'procurement:approve'];

const log = (line = '') => process.stdout.write(`${line}\n`);
const NOT_DURABLE = 'NOT DURABLE: commits are not flushed to disk, these figures are not comparable with production or with the README';
const cleanups = [];
const n = (x) => x.toLocaleString('en-US');

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
  if (env.BENCH_DATABASE_URL) return { url: env.BENCH_DATABASE_URL, stop: async () => undefined };
  const { startEmbeddedPostgres } = require(join(ROOT, 'dist/database/embedded-postgres.js'));
  const dir = mkdtempSync(join(tmpdir(), 'inventory-bench-pg-'));
  const flags = STATEMENTS
    ? ['-c', 'shared_preload_libraries=pg_stat_statements', '-c', 'pg_stat_statements.track=all', '-c', 'pg_stat_statements.track_planning=on']
    : [];
  // BENCH_PG_SETTINGS="name=value …" (embedded database only): more server settings, for an experiment.
  for (const setting of (env.BENCH_PG_SETTINGS ?? '').split(' ').filter(Boolean)) flags.push('-c', setting);
  const db = await startEmbeddedPostgres({ dir, port: await freePort(), database: 'inventory_bench', fast: config.unsafeFast, flags });
  return { url: db.url, stop: async () => (await db.stop(), rmSync(dir, { recursive: true, force: true })) };
}

/** The flags between `node` and `dist/main.js` in package.json's `start:prod`. */
function startProdFlags() {
  const command = require(join(ROOT, 'package.json')).scripts['start:prod'];
  const m = /^node ((?:--\S+ )*)dist\/main\.js$/.exec(command);
  if (!m) throw new Error(`package.json start:prod is not "node [flags] dist/main.js": ${command}`);
  return m[1].split(' ').filter(Boolean);
}

/** Production requires the key that encrypts webhook secrets: one per run, shared by the run's processes. */
const WEBHOOK_SECRET_KEY = randomBytes(32).toString('base64');

/** `node dist/main.js` in production mode, its output in a log file; resolves once /health answers 200. */
async function startService(databaseUrl, idp, platform, extraEnv = {}) {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'inventory-bench-service-')); // cwd: no stray .env is read
  const logFile = join(dir, 'service.log');
  const out = openSync(logFile, 'a');
  const passThrough = Object.fromEntries(['LOG_LEVEL', 'DB_POOL_SIZE', 'DB_TENANT_MAX_CONNECTIONS', 'LEDGER_BATCHES', 'LEDGER_BATCH_MAX', 'NODE_OPTIONS', 'WEBHOOK_CONCURRENCY', 'WEBHOOK_TENANT_CONCURRENCY', 'WEBHOOK_POLL_MS', 'WEBHOOK_DELIVERY_THREAD'].filter((k) => env[k]).map((k) => [k, env[k]]));
  // The node flags of `npm run start:prod` (the production start, also the Docker image's), then BENCH_NODE_ARGS
  // (e.g. --cpu-prof --cpu-prof-dir=/tmp/prof).
  const nodeArgs = [...startProdFlags(), ...(env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)];
  const child = spawn(process.execPath, [...nodeArgs, join(ROOT, 'dist/main.js')], {
    cwd: dir,
    env: {
      PATH: env.PATH, HOME: env.HOME, NODE_ENV: 'production', HTTP_PLATFORM: platform, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: databaseUrl,
      AUTH_MODE: 'jwt', IDP_ISSUER_URL: idp.issuer, IDP_AUDIENCE: idp.audience, CLAIM_NAMESPACE: idp.claimNamespace,
      // The rate limiter runs on every request, as in production, with a limit no scenario reaches.
      RATE_LIMIT_PER_MINUTE: '1000000000',
      // The webhook scenario's receiver listens on loopback, which webhooks refuse unless allowed.
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_SECRET_KEY, ...passThrough, ...extraEnv,
    },
    stdio: ['ignore', out, out],
  });
  const remove = () => (env.BENCH_KEEP_LOG === '1' ? log(`service log kept: ${logFile}`) : rmSync(dir, { recursive: true, force: true }));
  const service = {
    base: `http://127.0.0.1:${port}`,
    platform,
    pid: child.pid,
    logFile,
    exited: null,
    tail: () => readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n'),
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode) return resolve(remove());
        const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
        child.once('exit', () => (clearTimeout(kill), remove(), resolve()));
        child.kill('SIGTERM');
      }),
  };
  child.once('exit', (code, signal) => (service.exited = `code ${code}, signal ${signal}`));
  const until = Date.now() + 180_000;
  for (;;) {
    if (service.exited) throw new Error(`service exited (${service.exited}) while starting:\n${service.tail()}`);
    if (Date.now() > until) throw new Error(`service not healthy after 180 s:\n${service.tail()}`);
    const ok = await fetch(`${service.base}/health`).then((r) => r.ok, () => false);
    if (ok) return service;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * What a write scenario must have written, from the tenant's row counts before and after it and the
 * status codes of all its responses (warm-up included): adjustments, one ledger transaction of one line
 * per 201; reservations, one reservation per 201, one cancellation per 200, no ledger transaction.
 */
function writeCheck(kind, before, after, status) {
  const txns = after.txns - before.txns;
  const lines = after.lines - before.lines;
  if (kind === 'ledger')
    return { matches: status(201) === txns && lines === txns, text: `${n(status(201))} × 201, ${n(txns)} ledger transactions written (${n(lines)} lines)` };
  const created = after.reservations - before.reservations;
  const cancelled = after.cancelled - before.cancelled;
  return {
    matches: status(201) === created && status(200) === cancelled && txns === 0,
    text: `${n(status(201))} × 201 / ${n(created)} reservations, ${n(status(200))} × 200 / ${n(cancelled)} cancelled, ${n(txns)} ledger transactions`,
  };
}

/** BENCH_WAL: the WAL between two positions by relation and record type, per posting, largest first. */
async function walProfile(pg, [from, to], postings) {
  await pg.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
  // The WAL is decoded once: one row per record and relation it touches (a B-tree split touches two or three
  // pages of its index); from them, the ten largest (relation, record type) and the six relations with the
  // most full-page images (a page's first change after a checkpoint, or its first hint bits), in that order.
  const { rows } = await pg.query(
    `WITH r AS MATERIALIZED (
       SELECT coalesce(c.relname, b.relfilenode::text) AS relation, b.resource_manager || '/' || b.record_type AS record,
              b.start_lsn, max(b.record_length) AS bytes, count(*) FILTER (WHERE b.block_fpi_length > 0) AS fpis, sum(b.block_fpi_length) AS fpi_bytes
         FROM pg_get_wal_block_info($1::pg_lsn, $2::pg_lsn, false) b LEFT JOIN pg_class c ON c.relfilenode = b.relfilenode
        GROUP BY 1, 2, 3)
     (SELECT 1 AS part, relation, record, count(*) AS records, sum(fpis) AS fpis, sum(bytes) AS bytes FROM r
       GROUP BY 2, 3 ORDER BY sum(bytes) DESC LIMIT 10)
     UNION ALL
     (SELECT 2, relation, '(full pages in any record)', count(*) FILTER (WHERE fpis > 0), sum(fpis), sum(fpi_bytes) FROM r
       GROUP BY 2 HAVING sum(fpis) > 0 ORDER BY sum(fpi_bytes) DESC LIMIT 6)
     ORDER BY part, bytes DESC`,
    [from, to],
  );
  log('      records/posting  full pages/posting  bytes/posting  relation, record (for full pages: records with one, and the images\' bytes)');
  for (const w of rows) {
    log(`      ${(w.records / postings).toFixed(3).padStart(15)}  ${(w.fpis / postings).toFixed(3).padStart(18)}  ${(w.bytes / postings).toFixed(0).padStart(13)}  ${w.relation}, ${w.record}`);
  }
}

/** BENCH_STATEMENTS: counts from here on (statementProfile prints them). */
const resetStatements = (pg) => pg.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()');

/** BENCH_STATEMENTS: the scenario's statements by total execution time, per request. */
async function statementProfile(pg, requests) {
  const { rows } = await pg.query(`SELECT calls, total_exec_time, total_plan_time, shared_blks_hit, wal_records, query
      FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY total_exec_time + total_plan_time DESC LIMIT 14`);
  log('      calls/req  exec ms/req  plan ms/req  blks/call  wal/call  statement');
  for (const s of rows) {
    log(`      ${(s.calls / requests).toFixed(4).padStart(9)}  ${(s.total_exec_time / requests).toFixed(3).padStart(11)}  ${(s.total_plan_time / requests).toFixed(3).padStart(11)}  ` +
      `${(s.shared_blks_hit / s.calls).toFixed(1).padStart(9)}  ${(Number(s.wal_records) / s.calls).toFixed(1).padStart(8)}  ${s.query.replace(/\s+/g, ' ').slice(0, 110)}`);
  }
}

/**
 * Commits and WAL flushes so far: `pg_stat_database.xact_commit` of the bench database, and the WAL
 * fsyncs — PostgreSQL 18 counts them in `pg_stat_io` (object 'wal', context 'normal': the flushes of
 * commits by client backends and the WAL writer; 'init' is segment creation), 14–17 in `pg_stat_wal.wal_sync`.
 * Checked on the embedded PostgreSQL 18: 300 single-insert commits on one connection moved both by 300;
 * 1,000 on 10 connections, xact_commit by 1,000 and the fsyncs by 310 (group commit).
 */
/** Ledger transactions so far: the TX counters (gap-free: one per posting), read at once, not reported later as the statistics are. */
const POSTINGS = `(SELECT coalesce(sum(last_value), 0) FROM document_sequences WHERE prefix = 'TX')::bigint`;
/** Blocks the bench database read from outside PostgreSQL's buffers (the OS cache or the disk). */
const READS = `(SELECT blks_read FROM pg_stat_database WHERE datname = current_database())::bigint`;
async function walCounters(pg) {
  const { rows: [r] } = await pg.query(
    pgVersionNum >= 180000
      ? `SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database())::bigint AS commits, ${READS} AS reads,
                (SELECT coalesce(sum(fsyncs), 0) FROM pg_stat_io WHERE object = 'wal' AND context = 'normal')::bigint AS flushes, ${POSTINGS} AS postings, pg_current_wal_lsn()::text AS lsn`
      : `SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database())::bigint AS commits, ${READS} AS reads,
                ${pgVersionNum >= 140000 ? '(SELECT wal_sync FROM pg_stat_wal)' : 'NULL'}::bigint AS flushes, ${POSTINGS} AS postings, pg_current_wal_lsn()::text AS lsn`,
  );
  return { commits: Number(r.commits), reads: r.reads === null ? null : Number(r.reads), flushes: r.flushes === null ? null : Number(r.flushes), postings: Number(r.postings), lsn: r.lsn };
}
let pgVersionNum = 0;
/** A WAL position ('16/B374D848') as a byte offset. */
const lsnBytes = (lsn) => {
  const [hi, lo] = lsn.split('/');
  return parseInt(hi, 16) * 2 ** 32 + parseInt(lo, 16);
};

/**
 * Commits per WAL flush over the next `seconds` of a load that starts now: counters read now and again
 * just before the load ends. Busy backends report their statistics about once a second, but an idle
 * one only after up to 10 s, so both readings are taken while the load runs (each lags it by up to a
 * second, commits and flushes alike). Null when the server does not count flushes. (The first run's first
 * write scenario could show up to 1.4 before this connection's own pending commits were flushed first.)
 */
function walWindow(pg, seconds) {
  // This connection's own commits (seeding, checks) reported first, not inside the window (PostgreSQL 15+).
  const start = pg.query('SELECT pg_stat_force_next_flush()').catch(() => undefined).then(() => walCounters(pg));
  const end = new Promise((r) => setTimeout(r, Math.max(0, seconds * 1000 - 100))).then(() => walCounters(pg));
  return Promise.all([start, end]).then(
    ([a, b]) => {
      const flushes = b.flushes === null ? null : b.flushes - a.flushes;
      const postings = b.postings - a.postings;
      return {
        commits: b.commits - a.commits, reads: a.reads === null || b.reads === null ? null : b.reads - a.reads, flushes, postings, commitsPerFlush: flushes ? (b.commits - a.commits) / flushes : null, postingsPerFlush: flushes && postings ? postings / flushes : null,
        // WAL between the two readings' positions (exact, unlike pg_stat_wal's counters, which backends report up to a second late)
        walBytes: lsnBytes(b.lsn) - lsnBytes(a.lsn), lsn: [a.lsn, b.lsn],
      };
    },
    () => null,
  );
}

/** A run of a scenario's load as long as a measured one, not measured or checked (a process's or a database's warm-up). */
const unrecorded = (service, headers, def) =>
  drive({ base: service.base, connections: config.connections, headers, requests: def.requests, expect: def.expect, seconds: config.seconds });

/** One scenario: warm-up, measured run (RSS and CPU sampled), and for writes the row-count and invariant checks. */
async function runScenario(key, def, { service, pg, tenant, headers, postmaster, label = def.label }) {
  const before = def.write ? await counts(pg, tenant) : null;
  if (STATEMENTS) await resetStatements(pg);
  const opts = { base: service.base, connections: config.connections, headers, requests: def.requests, expect: def.expect };
  const warm = config.warmup > 0 ? await drive({ ...opts, seconds: config.warmup }) : { byStatus: {}, errors: 0, samples: [], requests: 0 };
  const cpu = () => [cpuMs(service.pid), postmaster ? cpuMs(postmaster, { tree: true }) : null];
  const rss = rssSampler(service.pid);
  const walMeasure = def.write ? walWindow(pg, config.seconds) : null;
  const cpu0 = cpu();
  const measuredFrom = performance.now();
  const r = await drive({ ...opts, seconds: config.seconds });
  const cpu1 = cpu();
  const peakRssMb = rss.stop();
  const wal = walMeasure ? await walMeasure : null;
  if (service.exited) throw new Error(`service exited (${service.exited}) during "${label}":\n${service.tail()}`);
  const perRequest = (i) => (cpu0[i] !== null && cpu1[i] !== null ? (cpu1[i] - cpu0[i]) / r.requests : null);
  const result = {
    key, label, rps: r.rps, p50: r.p50, p99: r.p99, requests: r.requests, seconds: r.seconds, byStatus: r.byStatus,
    errors: r.errors + warm.errors, warmup: { requests: warm.requests, byStatus: warm.byStatus },
    samples: [...warm.samples, ...r.samples].slice(0, 3), peakRssMb, serviceCpuMs: perRequest(0), dbCpuMs: perRequest(1),
    drained: r.drained && warm.drained !== false, wal, measuredFrom,
  };
  if (def.write) {
    const status = (code) => (warm.byStatus[code] ?? 0) + (r.byStatus[code] ?? 0);
    result.check = { ...writeCheck(def.write, before, await counts(pg, tenant), status), ...(await verify(pg, tenant)) };
  }
  const c = result.check;
  log(`  ${label.padEnd(50)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  errors ${result.errors}` +
    (result.serviceCpuMs !== null ? `  CPU svc ${result.serviceCpuMs.toFixed(2)}${result.dbCpuMs !== null ? ` db ${result.dbCpuMs.toFixed(2)}` : ''} ms` : '') +
    (wal?.commitsPerFlush ? `  ${wal.commitsPerFlush.toFixed(2)} commits${wal.postingsPerFlush ? ` and ${wal.postingsPerFlush.toFixed(2)} postings` : ""} per WAL flush` : '') +
    (wal?.postings ? `  WAL ${(wal.walBytes / wal.postings / 1024).toFixed(1)} kB per posting` : '') +
    (wal?.postings && wal.reads !== null ? `  ${(wal.reads / wal.postings).toFixed(2)} buffer misses per posting` : '') +
    (c ? `  | ${c.text}: ${c.matches ? 'match' : 'MISMATCH'}; invariants ${c.violations.length ? `${c.violations.length} VIOLATED` : 'ok'}` : ''));
  for (const s of result.samples) log(`      unexpected: ${s}`);
  if (STATEMENTS) await statementProfile(pg, r.requests + warm.requests);
  if (WAL_PROFILE && wal?.postings) await walProfile(pg, wal.lsn, wal.postings);
  return result;
}

async function main() {
  const loadBefore = loadavg()[0];
  const pgbenchBin = findPgbench();
  log(`inventory-service benchmark${QUICK ? ' (quick)' : ''}: ${config.connections} connections, ${config.seconds} s per scenario ` +
    `(+${config.warmup} s warm-up), ${n(config.items)} items, ${n(config.balances)} balances, ledger ${n(config.balances)} → ${n(config.lines)} lines; ` +
    `database: ${config.database}${config.unsafeFast ? ' (BENCH_PG_UNSAFE_FAST: NOT DURABLE)' : ''}; pgbench: ${pgbenchBin ?? 'not found'}; ${cpus().length} CPUs, Node ${process.version}`);

  const db = await database();
  cleanups.push(db.stop);
  const idp = await startIdp();
  cleanups.push(idp.stop);
  // One service process per platform, both up for the whole run (an idle one costs nothing).
  const services = {};
  for (const platform of PLATFORMS) {
    const s = await startService(db.url, idp, platform);
    cleanups.push(s.stop);
    services[platform] = s;
    log(`service up at ${s.base} on ${platform} (pid ${s.pid}, NODE_ENV=production, AUTH_MODE=jwt, issuer ${idp.issuer})`);
  }
  const service = services[PLATFORMS[0]];

  const tenant = randomUUID();
  const headers = { authorization: `Bearer ${idp.token({ tenantId: tenant, permissions: PERMISSIONS })}` };
  // The tenant's first request provisions it (on each service: each process keeps its own provisioning cache).
  for (const s of Object.values(services)) {
    const first = await fetch(`${s.base}/v1/facilities`, { headers });
    if (first.status !== 200) throw new Error(`GET /v1/facilities with a fresh token on ${s.platform}: ${first.status} ${await first.text()}`);
  }

  const pg = await connect(db.url);
  cleanups.push(() => pg.end());
  const { rows: [server] } = await pg.query(
    `SELECT current_setting('server_version') AS version, current_setting('server_version_num')::int AS num, current_setting('fsync') AS fsync,
            current_setting('synchronous_commit') AS synchronous_commit, current_setting('full_page_writes') AS full_page_writes`,
  );
  const pgVersion = server.version;
  pgVersionNum = server.num;
  // Durable: every commit waits for its WAL flush, and a torn page can be restored (what production runs).
  const durability = { fsync: server.fsync, synchronousCommit: server.synchronous_commit, fullPageWrites: server.full_page_writes };
  durability.durable = server.fsync === 'on' && server.synchronous_commit !== 'off' && server.full_page_writes === 'on';
  log(`PostgreSQL ${pgVersion}: fsync=${server.fsync}, synchronous_commit=${server.synchronous_commit}, full_page_writes=${server.full_page_writes}` +
    (durability.durable ? ' (durable)' : ` — ${NOT_DURABLE}`));
  // The embedded PostgreSQL's CPU time is measured too; a BENCH_DATABASE_URL server may serve others, so it is not.
  const postmaster = env.BENCH_DATABASE_URL ? null : postmasterOf((await pg.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
  log(`seeding tenant ${tenant} (PostgreSQL ${pgVersion})`);
  const ctx = await seedBase(pg, { tenant, items: config.items, balances: config.balances, hot: config.hot });
  ctx.itemIds = (await pg.query('SELECT id FROM items WHERE tenant_id = $1', [tenant])).rows.map((r) => r.id);
  // Fresh statistics for every table (the seed's bulk loads analyze only the tables they fill).
  await pg.query('ANALYZE');
  const seedCheck = await verify(pg, tenant);
  log(`  seeded; invariants ${seedCheck.violations.length ? `${seedCheck.violations.length} VIOLATED` : 'ok'}`);

  const defs = scenarios(ctx);
  const common = { pg, tenant, headers, postmaster };
  const results = Object.fromEntries(PLATFORMS.map((p) => [p, {}]));
  // Every scenario on each platform in turn, back to back (same data, same machine state).
  const onEach = async (key, def, label = def.label) => {
    for (const p of PLATFORMS) results[p][key] = await runScenario(key, def, { ...common, service: services[p], label: `${label} [${p}]` });
  };
  // The scenarios the platforms are compared on (Express ≥ 0.7 × Fastify: the item read, the spread and the
  // hot adjustments), the first reads and the first writes of each process: one unrecorded run on each
  // process first (a process's first seconds of a new kind of load run slower than its later ones, and the
  // 2 s warm-up does not cover them), then BENCH_PLATFORM_ROUNDS runs on each, with both platforms in
  // alternating order (express, fastify; fastify, express; …), each platform's figure their sum. Measured
  // before (bench/README, fifteenth round): the item read's Express / Fastify ratio was 0.49 with Express
  // first and 0.78 with Fastify first (quick runs, one run each), and Express's first spread adjustments
  // made 899 req/s against 1,168 for the same scenario later in the same full run.
  const alternating = async (key, def) => {
    const unrecordedErrors = {};
    for (const p of PLATFORMS) {
      const warm = await unrecorded(services[p], headers, def);
      unrecordedErrors[p] = warm.errors;
      for (const s of warm.samples) log(`      unexpected (unrecorded run) [${p}]: ${s}`);
    }
    const runs = await alternatingRounds(PLATFORMS, config.platformRounds, (p, round) =>
      runScenario(key, def, { ...common, service: services[p], label: `${def.label} (${round}) [${p}]` }));
    const how = config.platformRounds === 1 ? '1 run' : `${config.platformRounds} runs${PLATFORMS.length > 1 ? ', alternating' : ''}`;
    for (const p of PLATFORMS) {
      const r = (results[p][key] = merge(runs[p], `${def.label} (${how}) [${p}]`));
      r.errors += unrecordedErrors[p]; // the unrecorded run's errors count too (the report's "zero errors" includes warm-ups)
      log(`  ${r.label}: ${r.rps.toFixed(0)} req/s (runs ${r.runs.map((x) => x.rps.toFixed(0)).join(', ')}), p99 ${r.p99} ms, CPU svc ${r.serviceCpuMs?.toFixed(2)} ms`);
    }
  };
  const lines = async () => n((await counts(pg, tenant)).lines);
  log(`\nreads, ledger of ${await lines()} lines`);
  if (wanted('itemGet')) await alternating('itemGet', defs.itemGet);
  if (wanted('itemSearch')) await onEach('itemSearch', defs.itemSearch);
  const small = await lines();
  if (wanted('transactionsSmall')) await onEach('transactionsSmall', defs.transactions, `${defs.transactions.label}, ${small} lines`);
  if (wanted('availabilitySmall')) await onEach('availabilitySmall', defs.availability, `${defs.availability.label}, ${small} lines`);

  log('\nwrites (each followed by the row-count check and every ledger invariant)');
  for (const key of ['adjustSpread', 'adjustHot']) if (wanted(key)) await alternating(key, defs[key]);
  for (const key of ['adjustKeyed', 'reserveCancel']) if (wanted(key)) await onEach(key, defs[key]);
  if (wanted('receive')) {
    ctx.orders = await receiptOrders(services[PLATFORMS[0]].base, headers, ctx);
    await onEach('receive', defs.receive);
  }
  if (wanted('eventsCost')) {
    log(`\nwhat the ledger's events cost: the same adjustments alternately with events and without (a second service process with LEDGER_EVENTS=false), ${config.eventsRounds} rounds`);
    for (const p of PLATFORMS) {
      const quiet = await startService(db.url, idp, p, { LEDGER_EVENTS: 'false' });
      cleanups.push(quiet.stop);
      const first = await fetch(`${quiet.base}/v1/facilities`, { headers });
      if (first.status !== 200) throw new Error(`GET /v1/facilities on the LEDGER_EVENTS=false service: ${first.status}`);
      Object.assign(results[p], await eventsCost(defs, { ...common, service: services[p] }, { ...common, service: quiet }, p));
      await quiet.stop();
    }
  }
  if (wanted('webhookCost')) {
    log(`\nwhat a webhook costs: the same adjustments alternately with one webhook subscribed to stock.changed (a loopback receiver answering 204) and without, ${config.eventsRounds} rounds`);
    for (const p of PLATFORMS) Object.assign(results[p], await webhookCost(defs, { ...common, service: services[p] }, p));
  }
  if (wanted('adjustSpreadCold')) {
    // The analyzed figure to compare with is taken again, alternating with the never-analyzed runs, when both
    // databases' processes have run before. Like the never-analyzed side, it follows one unrecorded run; every
    // run of either side starts settled (VACUUM (ANALYZE) of this database, CHECKPOINT), as the alternated runs
    // do (the VACUUM touches only this database): the dead rows of the runs before are vacuumed before a
    // measured run, not inside it (unsettled, such a pass landed in the reference: twice the WAL per posting, a
    // buffer miss per posting, 0.67-0.72 x its figure: bench/README, fourteenth round). Autovacuum stays on
    // here, for each run's own rows.
    const analyzed = {
      settle: () => settle(common.pg),
      warm: (p) => unrecorded(services[p], headers, defs.adjustSpread),
      run: (p, label) => runScenario('adjustSpreadAgain', defs.adjustSpread, { ...common, service: services[p], label }),
    };
    Object.assign(results, await coldDatabase(db.url, idp, results, { headers, postmaster, tenant, analyzed }));
  }
  if (wanted('feedPoll')) {
    for (const p of PLATFORMS) {
      const r = (results[p].feedPoll = await feedPoll({ ...defs.adjustSpread, label: `${defs.adjustSpread.label} [${p}]` }, { ...common, service: services[p] }));
      const f = r.feed;
      log(`  the feed [${p}], one reader polling GET /v1/events?after=&limit=100 meanwhile: ${f.polls} polls measured (warm-up left out), p50 ${f.p50} ms, p99 ${f.p99} ms, max ${f.max} ms; ` +
        `${f.events} events read, ${f.expected} written (${f.expected - f.events} missing), ${f.errors} errors`);
    }
  }

  let growCheck = null;
  if (wanted('transactionsLarge') || wanted('availabilityLarge') || wanted('transactionsFirstPage') || wanted('transactionsDeepCursor')) {
    log(`\ngrowing the ledger to ${n(config.lines)} lines`);
    await growLedger(pg, ctx, config.lines);
    growCheck = await verify(pg, tenant);
    const large = await lines();
    log(`  ${large} lines; invariants ${growCheck.violations.length ? `${growCheck.violations.length} VIOLATED` : 'ok'}`);
    if (wanted('transactionsLarge')) await onEach('transactionsLarge', defs.transactions, `${defs.transactions.label}, ${large} lines`);
    if (wanted('availabilityLarge')) await onEach('availabilityLarge', defs.availability, `${defs.availability.label}, ${large} lines`);
    if (wanted('transactionsFirstPage') || wanted('transactionsDeepCursor'))
      for (const p of PLATFORMS) Object.assign(results[p], await deepCursor({ ...common, service: services[p] }, large));
  }
  // After the large ledger's reads: its 1,000-line shipments would be the newest transactions, the first
  // page of the transactions list (4,000 lines to render instead of 50).
  if (wanted('shipLarge')) {
    log('\ndocuments');
    for (const p of PLATFORMS) {
      const s = (results[p].shipLarge = await shipLarge(services[p].base, headers, ctx, common.pg));
      s.label = `${s.label} [${p}]`;
      log(`  ${s.label}: one ship ${s.oneMs} ms (${s.oneStatus}); three at once ${s.threeMs} ms (${s.threeStatuses.join(', ')})`);
    }
  }

  const servicePeakRss = Object.fromEntries(PLATFORMS.map((p) => [p, peakRss(services[p].pid)]));

  log('\nbaselines');
  const baselines = {};
  const body = await (await fetch(`${service.base}/v1/items/${ctx.itemIds[0]}`, { headers })).text();
  baselines.bareHttp = await bareHttp(body, { connections: config.connections, seconds: config.seconds, warmup: config.warmup });
  log(`  bare Node http: ${baselines.bareHttp.rps.toFixed(0)} req/s (${body.length} byte body, as GET /v1/items/{id})`);
  let pgbenchVersion = null;
  if (pgbenchBin) {
    const dbCpu = () => (postmaster ? cpuMs(postmaster, { tree: true }) : null);
    const pb = await pgbench(pgbenchBin, db.url, { connections: config.connections, seconds: config.seconds, scale: config.pgbenchScale, log, dbCpu,
      wal: (seconds) => walWindow(pg, seconds), checkpoint: () => pg.query('CHECKPOINT') });
    baselines.tpcb = { label: `pgbench TPC-B (scale ${pb.scale})`, ...pb.tpcb };
    baselines.select = { label: 'pgbench select-only', ...pb.select };
    pgbenchVersion = pb.version;
  }

  report({
    config: { ...config, durability, platforms: PLATFORMS, pgbench: pgbenchBin, pgbenchVersion, postgres: pgVersion, node: process.version, cpus: cpus().length, tenant, loadBefore },
    results, baselines, servicePeakRss, seedChecks: [seedCheck, growCheck].filter(Boolean), jwksRequests: idp.jwksRequests,
  }, log);
}

/**
 * `rounds` rounds over `sides`, their order reversed every other round (A-B, B-A, …) against the machine's
 * drift: `runOne(side, round)` for each, its results by side.
 */
async function alternatingRounds(sides, rounds, runOne) {
  const runs = Object.fromEntries(sides.map((side) => [side, []]));
  for (let round = 1; round <= rounds; round++)
    for (const side of round % 2 ? sides : [...sides].reverse()) runs[side].push(await runOne(side, round));
  return runs;
}

/**
 * Every alternated run starts from the same state. VACUUM (ANALYZE) does now what autovacuum would do
 * later for the runs before (their dead rows, hint bits, visibility map, statistics): measured in the
 * twelfth round, such a pass lands in whichever run follows it, after its CHECKPOINT, and doubled or
 * tripled that run's WAL per posting (bench/README). Then a CHECKPOINT: the first change to each page after
 * one writes the whole page to the WAL, so a run that a checkpoint happens to precede pays more than the
 * next one. Returns VACUUM's milliseconds (the previous run's leftovers: printed per mode).
 */
async function settle(pg) {
  const started = Date.now();
  await pg.query('VACUUM (ANALYZE)');
  const ms = Date.now() - started;
  await pg.query('CHECKPOINT');
  return ms;
}

/**
 * The settles of one alternated comparison: `before(pg, mode)` settles before a run of `mode` (undefined: a
 * run not recorded), `end(pg)` after the last run; each VACUUM's time counts for the mode of the recorded run
 * before it. `vacuumed`: those sums per mode; `printed`: them as a line's tail.
 */
function settles() {
  const vacuumed = { on: 0, off: 0 };
  let previous;
  const count = (ms) => {
    if (previous) vacuumed[previous] += ms;
  };
  return {
    vacuumed,
    async before(pg, mode) {
      count(await settle(pg));
      previous = mode;
    },
    async end(pg) {
      count(await settle(pg));
    },
    printed: () => `VACUUM after the runs: ${Object.entries(vacuumed).map(([mode, ms]) => `${mode} ${ms.toLocaleString('en-US')} ms`).join(', ')}`,
  };
}

/**
 * Events' cost (issue 23: adjustments with events ≥ 0.8 × without, in the same run or alternating runs):
 * each adjustment scenario runs `eventsRounds` times on the normal service and on one with
 * LEDGER_EVENTS=false (warmed by one unrecorded run first), alternately (on, off; off, on; …), every run
 * checked like any write scenario. The
 * figure is the ratio of the summed requests/s; the median of the rounds' ratios is printed beside it.
 */
async function eventsCost(defs, on, off, platform) {
  const out = {};
  for (const key of ['adjustSpread', 'adjustHot']) {
    // The second process starts cold: one unrecorded run first, so that both have run the statement and
    // their JIT is warm. Then the rounds alternate their order (on, off; off, on; …) against drift.
    if (key === 'adjustSpread') await unrecorded(off.service, off.headers, defs[key]);
    const settled = settles(); // both processes share the database: either's pg will do
    const runs = await alternatingRounds(['on', 'off'], config.eventsRounds, async (mode, round) => {
      const common = mode === 'on' ? on : off;
      await settled.before(common.pg, mode);
      return runScenario(`${key}Events`, defs[key], { ...common, label: `${defs[key].label}, events ${mode} (${round}) [${platform}]` });
    });
    await settled.end(on.pg);
    const merged = (mode) => merge(runs[mode], `${defs[key].label}, events ${mode} (${config.eventsRounds} runs) [${platform}]`);
    const ratios = runs.on.map((r, i) => r.rps / runs.off[i].rps).sort((a, b) => a - b);
    const withEvents = merged('on');
    const without = merged('off');
    withEvents.events = { ratio: withEvents.rps / without.rps, medianRatio: ratios[Math.floor(ratios.length / 2)], ratios, vacuumAfterMs: settled.vacuumed };
    log(`  ${defs[key].label} [${platform}]: with events ${withEvents.rps.toFixed(0)} req/s, without ${without.rps.toFixed(0)} req/s: ` +
      `${withEvents.events.ratio.toFixed(3)} × (rounds ${ratios.map((x) => x.toFixed(2)).join(', ')}); CPU per adjustment ` +
      `${(withEvents.serviceCpuMs + withEvents.dbCpuMs).toFixed(2)} vs ${(without.serviceCpuMs + without.dbCpuMs).toFixed(2)} ms; ${settled.printed()}`);
    out[`${key}EventsOn`] = withEvents;
    out[`${key}EventsOff`] = without;
  }
  return out;
}

/**
 * A webhook's cost (issue 24: adjustments with one webhook subscribed to stock.changed ≥ 0.8 × without, and
 * event-to-delivery lag p99 < 2 s): the spread adjustments alternately with a webhook (created just before
 * the run: it starts at the feed's head; its deliveries are awaited after the run, then it is deleted) and
 * without one, every run checked like any write scenario. The receiver (bench/receiver.js, a process of its
 * own) answers 204 and records each delivery's lag: its arrival less the event's occurredAt. Every process of the run delivers
 * (both platforms' services are up): the figures include the dispatcher of every instance.
 */
async function webhookCost(defs, common, platform) {
  const { fork } = require('node:child_process');
  const receiver = fork(join(__dirname, 'receiver.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ask = (cmd) =>
    new Promise((resolve, reject) => {
      const onMessage = (m) => {
        if (m.cmd !== (cmd === 'start' ? 'listening' : cmd)) return;
        receiver.off('message', onMessage);
        receiver.off('exit', onExit);
        resolve(m);
      };
      const onExit = (code) => reject(new Error(`the webhook receiver exited (${code})`));
      receiver.on('message', onMessage);
      receiver.once('exit', onExit);
      if (cmd !== 'start') receiver.send({ cmd });
    });
  const { port } = await ask('start');
  const url = `http://127.0.0.1:${port}/hook`;
  const api = (method, path, body) =>
    fetch(`${common.service.base}${path}`, { method, headers: { ...common.headers, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
  const def = defs.adjustSpread;
  const runs = { on: [], off: [] };
  const lags = [];
  let expected = 0;
  let received = 0;
  let duplicates = 0;
  let receiverCpuMs = 0;
  const settled = settles();
  try {
    // Round 0, not recorded: the process's first webhook-on run (its delivery thread starts, the delivery
    // path's code is compiled) measured 0.64-0.69 x where every later round measured 0.78-0.84 x (quick runs, both platforms).
    for (let round = 0; round <= config.eventsRounds; round++) {
      for (const mode of round === 0 ? ['on'] : round % 2 ? ['on', 'off'] : ['off', 'on']) {
        const label = `${def.label}, webhook ${mode} (${round || 'first, not recorded'}) [${platform}]`;
        await settled.before(common.pg, round > 0 ? mode : undefined); // after the previous run's webhook was deleted with its attempts
        if (mode === 'off') {
          runs.off.push(await runScenario('adjustSpreadWebhook', def, { ...common, label }));
          continue;
        }
        const created = await api('POST', '/v1/webhooks', { url, types: ['stock.changed'], description: 'bench receiver' });
        if (created.status !== 201) throw new Error(`POST /v1/webhooks: ${created.status} ${await created.text()}`);
        const hook = (await created.json()).data;
        await ask('reset');
        const cpuBefore = (await ask('report')).cpuMs;
        const r = await runScenario('adjustSpreadWebhook', def, { ...common, label });
        if (round > 0) runs.on.push(r);
        // Every stock.changed event of the run (warm-up included): one per 201 (one balance key per adjustment).
        const want = (r.warmup.byStatus[201] ?? 0) + (r.byStatus[201] ?? 0);
        const until = Date.now() + 60_000;
        while ((await ask('count')).received < want && Date.now() < until) await new Promise((res) => setTimeout(res, 200));
        const got = await ask('report');
        expected += want;
        received += got.received;
        duplicates += got.requests - got.received;
        receiverCpuMs += got.cpuMs - cpuBefore;
        lags.push(...got.lags);
        const removed = await api('DELETE', `/v1/webhooks/${hook.id}`);
        if (removed.status !== 204) throw new Error(`DELETE /v1/webhooks/${hook.id}: ${removed.status}`);
      }
    }
    await settled.end(common.pg);
  } finally {
    receiver.kill();
  }
  const on = merge(runs.on, `${def.label}, webhook on (${config.eventsRounds} runs) [${platform}]`);
  const off = merge(runs.off, `${def.label}, webhook off (${config.eventsRounds} runs) [${platform}]`);
  lags.sort((a, b) => a - b);
  const pct = (q) => (lags.length ? lags[Math.min(lags.length - 1, Math.floor(q * lags.length))] : null);
  const ratios = runs.on.map((r, i) => r.rps / runs.off[i].rps);
  on.webhook = { ratio: on.rps / off.rps, ratios, expected, received, duplicates, receiverCpuMs: received ? receiverCpuMs / received : null, lagP50: pct(0.5), lagP99: pct(0.99), lagMax: lags.at(-1) ?? null, vacuumAfterMs: settled.vacuumed };
  const w = on.webhook;
  log(`  ${def.label} [${platform}]: with a webhook ${on.rps.toFixed(0)} req/s, without ${off.rps.toFixed(0)} req/s: ${w.ratio.toFixed(3)} × ` +
    `(rounds ${ratios.map((x) => x.toFixed(2)).join(', ')}); delivered ${w.received} of ${w.expected} events (${w.duplicates} repeated), ` +
    `event → delivery p50 ${w.lagP50} ms, p99 ${w.lagP99} ms, max ${w.lagMax} ms; the receiver's CPU ${w.receiverCpuMs?.toFixed(2)} ms per delivery; ${settled.printed()}`);
  return { adjustSpreadWebhookOn: on, adjustSpreadWebhookOff: off };
}

/** Several runs of one scenario as one row: requests over their total time, CPU per request weighted, the worst p99, checks combined. */
function merge(runs, label) {
  const requests = runs.reduce((s, r) => s + r.requests, 0);
  const weighted = (f) => (runs.every((r) => r[f] !== null) ? runs.reduce((s, r) => s + r[f] * r.requests, 0) / requests : null);
  const flushes = runs.reduce((s, r) => s + (r.wal?.flushes ?? 0), 0);
  const commits = runs.reduce((s, r) => s + (r.wal?.commits ?? 0), 0);
  const postings = runs.reduce((s, r) => s + (r.wal?.postings ?? 0), 0);
  const summed = (f) => (runs.every((r) => typeof r.wal?.[f] === 'number') ? runs.reduce((s, r) => s + r.wal[f], 0) : null);
  return {
    key: runs[0].key, label, requests, seconds: runs.reduce((s, r) => s + r.seconds, 0), rps: requests / runs.reduce((s, r) => s + r.seconds, 0),
    p50: runs.map((r) => r.p50).sort((a, b) => a - b)[Math.floor(runs.length / 2)], p99: Math.max(...runs.map((r) => r.p99)),
    errors: runs.reduce((s, r) => s + r.errors, 0), peakRssMb: Math.max(...runs.map((r) => r.peakRssMb ?? 0)),
    serviceCpuMs: weighted('serviceCpuMs'), dbCpuMs: weighted('dbCpuMs'), drained: runs.every((r) => r.drained),
    wal: flushes ? { commits, flushes, postings, commitsPerFlush: commits / flushes, postingsPerFlush: postings ? postings / flushes : null, walBytes: summed('walBytes'), reads: summed('reads') } : null,
    check: runs[0].check && {
      matches: runs.every((r) => r.check.matches), text: runs.map((r) => r.check.text).join('; '),
      checks: runs[0].check.checks, violations: runs.flatMap((r) => r.check.violations),
    },
    runs: runs.map(({ rps, p50, p99, requests: n, serviceCpuMs, dbCpuMs, wal }) => ({ rps, p50, p99, requests: n, serviceCpuMs, dbCpuMs, walBytes: wal?.walBytes ?? null, postings: wal?.postings ?? null, reads: wal?.reads ?? null })),
  };
}

/**
 * Plans that do not depend on luck (issue 26, point 3): the spread adjustments on a second database of the
 * same server, loaded the same way but never analyzed — no ANALYZE, no VACUUM, autovacuum off for every
 * table of it — served by fresh service processes, whose connections build each statement's generic plan
 * on tables without statistics. First, the direct adjustment's generic plan there (EXPLAIN, as the
 * service's role): its balance look-up must be an index probe on the whole key. Reported beside the
 * analyzed database's figure, taken in alternating runs (target: at least 0.9 of it). `analyzed`: `settle()`
 * vacuums the analyzed database and checkpoints the server, `warm(p)` is the platform's unrecorded run
 * there, `run(p, label)` its measured one.
 */
async function coldDatabase(url, idp, results, { headers, postmaster, tenant, analyzed }) {
  const name = 'inventory_bench_cold';
  const coldUrl = (() => {
    const u = new URL(url);
    u.pathname = `/${name}`;
    return u.toString();
  })();
  const admin = await connect(url);
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  log(`\na never-analyzed database (${name}, same server): ${n(config.items)} items, ${n(config.balances)} balances, loaded without ANALYZE or VACUUM, autovacuum off`);
  const services = {};
  const stopAll = async () => {
    for (const s of Object.values(services)) await s.stop();
  };
  const pg = await connect(coldUrl);
  try {
    for (const platform of PLATFORMS) {
      services[platform] = await startService(coldUrl, idp, platform);
      cleanups.push(services[platform].stop);
      if (platform === PLATFORMS[0]) {
        // Right after the migrations: autovacuum off for every table (it would analyze them after the load).
        const { rows } = await pg.query(`SELECT format('ALTER TABLE %I.%I SET (autovacuum_enabled = false)', schemaname, tablename) AS stmt FROM pg_tables WHERE schemaname = 'public'`);
        for (const r of rows) await pg.query(r.stmt);
      }
    }
    // The same tenant and token as the analyzed database: its first request provisions it here.
    for (const s of Object.values(services)) {
      const first = await fetch(`${s.base}/v1/facilities`, { headers });
      if (first.status !== 200) throw new Error(`GET /v1/facilities on the never-analyzed database: ${first.status}`);
    }
    const ctx = await seedBase(pg, { tenant, items: config.items, balances: config.balances, hot: config.hot, analyze: false });
    const stats = await balanceStats(pg);
    const statsLine = (x) => `balances: ${n(x.balances)} rows, ${x.stats} column statistics, ${x.runs} (auto)vacuum/analyze runs`;
    log(`  ${statsLine(stats)}`);
    const plan = await explainDirect(pg, ctx);
    log(`  the direct adjustment's generic plan, balance look-up: ${plan.lookup.join(' / ')} → ${plan.fullKey ? 'the whole key' : 'NOT THE WHOLE KEY'}`);
    if (env.BENCH_EXPLAIN === '1') for (const l of plan.plan) log(`      ${l}`);
    const defs = scenarios(ctx);
    const out = {};
    for (const p of PLATFORMS) {
      // A fresh process: one unrecorded run first, as the analyzed figure's process has run before (its JIT
      // warm). Its connections build their generic plans here, still without statistics (nothing analyzes).
      await unrecorded(services[p], headers, defs.adjustSpread);
      await analyzed.warm(p);
      // Then `eventsRounds` rounds of (never analyzed, analyzed again), their order alternating (A-B, B-A, …):
      // both sides follow one unrecorded run of their process, and each run starts right after the analyzed
      // database's VACUUM and a CHECKPOINT (server-wide: the load's pages and the runs' before are flushed
      // first). One pair alone moved by ±15% with the machine (bench/README, fourteenth round).
      const runs = await alternatingRounds(['cold', 'warm'], config.eventsRounds, async (side, round) => {
        await analyzed.settle();
        if (side === 'warm') return analyzed.run(p, `${defs.adjustSpread.label}, analyzed, again (${round}) [${p}]`);
        const r = await runScenario('adjustSpreadCold', defs.adjustSpread, {
          service: services[p], pg, tenant: ctx.tenant, headers, postmaster, label: `${defs.adjustSpread.label}, never analyzed (${round}) [${p}]`,
        });
        log(`  after it, ${statsLine(await balanceStats(pg))}`);
        return r;
      });
      const r = merge(runs.cold, `${defs.adjustSpread.label}, never analyzed (${config.eventsRounds} runs) [${p}]`);
      r.cold = { ...stats, plan };
      const warm = merge(runs.warm, `${defs.adjustSpread.label}, analyzed, again (${config.eventsRounds} runs) [${p}]`);
      const ratios = runs.cold.map((c, i) => (c.rps / runs.warm[i].rps).toFixed(2)).join(', ');
      log(`  never analyzed / analyzed, again [${p}]: ${(r.rps / warm.rps).toFixed(3)} × (${r.rps.toFixed(0)} vs ${warm.rps.toFixed(0)} req/s; rounds ${ratios}); ` +
        `PostgreSQL CPU per adjustment ${r.dbCpuMs?.toFixed(2)} vs ${warm.dbCpuMs?.toFixed(2)} ms`);
      out[p] = { ...results[p], adjustSpreadCold: r, adjustSpreadAgain: warm };
    }
    return out;
  } finally {
    await pg.end();
    await stopAll();
  }
}

/** The balances table's rows, column statistics and (auto)vacuum/analyze runs so far. */
async function balanceStats(pg) {
  const { rows: [r] } = await pg.query(
    `SELECT (SELECT count(*) FROM pg_stats WHERE schemaname = 'public' AND tablename = 'balances')::int AS stats,
            (SELECT analyze_count + autoanalyze_count + vacuum_count + autovacuum_count FROM pg_stat_user_tables WHERE relname = 'balances')::int AS runs,
            (SELECT count(*) FROM balances)::int AS balances`,
  );
  return r;
}

/**
 * EXPLAIN of the direct adjustment statement (the one an adjustment sends) with its generic plan, as the
 * service runs it (its role, the tenant set, plan_cache_mode = force_generic_plan), for one seeded balance:
 * the lines of the balances look-up, and whether its Index Cond holds all five key columns.
 */
async function explainDirect(pg, ctx) {
  const { direct } = require(join(ROOT, 'dist/inventory/ledger/direct.sql.js'));
  const { APP_ROLE } = require(join(ROOT, 'dist/database/constants.js'));
  const [key] = ctx.keys;
  const { rows: [v] } = await pg.query(
    `SELECT i.version AS item_version, l.version AS location_version, f.version AS facility_version, l.facility_id
       FROM items i, locations l JOIN facilities f ON f.tenant_id = l.tenant_id AND f.id = l.facility_id
      WHERE i.tenant_id = $1 AND i.id = $2 AND l.tenant_id = $1 AND l.id = $3`,
    [ctx.tenant, key.itemId, key.locationId],
  );
  const line = {
    item: { id: key.itemId, version: v.item_version },
    location: { id: key.locationId, version: v.location_version, facilityVersion: v.facility_version, facilityId: v.facility_id },
    status: { id: ctx.status },
  };
  const statement = direct(ctx.tenant, line, '1', { id: randomUUID(), type: 'adjustment', postedBy: 'bench', reason: 'explain', sourceType: null, sourceId: null }, () => ({}));
  await pg.query('BEGIN');
  try {
    await pg.query(`SET LOCAL ROLE ${APP_ROLE}`);
    await pg.query(`SELECT set_config('app.tenant_id', $1, true)`, [ctx.tenant]);
    await pg.query(`SET LOCAL plan_cache_mode = force_generic_plan`);
    await pg.query(`PREPARE bench_direct AS ${statement.text}`);
    const literal = (x) => (x === null ? 'NULL' : `'${String(x).replace(/'/g, "''")}'`);
    const { rows } = await pg.query(`EXPLAIN (COSTS OFF) EXECUTE bench_direct(${statement.values.map(literal).join(', ')})`);
    const text = rows.map((r) => r['QUERY PLAN']);
    const at = text.findIndex((l) => / on balances b\b/.test(l) && !/Update/.test(l));
    const lookup = at < 0 ? ['(no balances scan found)'] : text.slice(at, at + 3).filter((l, i) => i === 0 || /Cond|Filter/.test(l)).map((l) => l.trim());
    const cond = lookup.find((l) => l.startsWith('Index Cond')) ?? '';
    // Whichever index (every index of balances that holds the item or the location ends with the whole key).
    const fullKey = /Index (Only )?Scan using/.test(lookup[0]) && ['tenant_id', 'item_id', 'location_id', 'lot_key', 'status_id'].every((c) => cond.includes(`${c} =`));
    return { lookup, fullKey, plan: text };
  } finally {
    await pg.query('ROLLBACK');
    await pg.query('DEALLOCATE ALL').catch(() => undefined);
  }
}

/**
 * Cursor paging: page 1 of the transactions list and page 10,000 (50 rows a page, so rows 499,951–500,000
 * of the 1,000,000-line ledger's 505,000 transactions; the last page of a smaller ledger) read by cursor. The cursor comes from the API: the `nextCursor` of page 9,999 read once by
 * offset. Page 10,000 by cursor must equal page 10,000 by offset (checked); then both pages are driven
 * as scenarios, and the single-request times of the deep page by offset and by cursor are printed.
 */
async function deepCursor(common, large) {
  const { service, headers } = common;
  const get = async (path) => {
    const t0 = performance.now();
    const res = await fetch(`${service.base}${path}`, { headers });
    const body = await res.json();
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(body)}`);
    return { body, ms: performance.now() - t0 };
  };
  const PAGE = 50;
  const { body: first } = await get(`/v1/inventory/transactions?limit=${PAGE}`);
  const page = Math.min(10_000, Math.ceil(first.count / PAGE));
  const before = await get(`/v1/inventory/transactions?limit=${PAGE}&offset=${(page - 2) * PAGE}`);
  const cursor = before.body.nextCursor;
  const byOffset = await get(`/v1/inventory/transactions?limit=${PAGE}&offset=${(page - 1) * PAGE}`);
  const byCursor = await get(`/v1/inventory/transactions?limit=${PAGE}&after=${encodeURIComponent(cursor)}`);
  const same = JSON.stringify(byCursor.body.data) === JSON.stringify(byOffset.body.data) && byCursor.body.data.length > 0;
  if (!same) throw new Error(`page ${page} by cursor differs from page ${page} by offset`);
  log(`  page ${n(page)} of ${n(first.count)} transactions: one request by offset ${byOffset.ms.toFixed(1)} ms, by cursor ${byCursor.ms.toFixed(1)} ms (same rows)`);
  const path = (suffix) => [{ method: 'GET', path: `/v1/inventory/transactions?limit=${PAGE}${suffix}` }];
  const out = {};
  if (wanted('transactionsFirstPage'))
    out.transactionsFirstPage = await runScenario('transactionsFirstPage', { label: `transactions page 1 (${large} lines)`, expect: [200], requests: path('') }, common);
  if (wanted('transactionsDeepCursor'))
    out.transactionsDeepCursor = await runScenario(
      'transactionsDeepCursor',
      { label: `transactions page ${n(page)} by cursor (${large} lines)`, expect: [200], requests: path(`&after=${encodeURIComponent(cursor)}`) },
      common,
    );
  if (out.transactionsDeepCursor) out.transactionsDeepCursor.deep = { page, offsetMs: byOffset.ms, cursorMs: byCursor.ms };
  return out;
}

/**
 * The event feed under write load: the adjustments of `def` on every connection, and meanwhile one reader
 * that follows the feed from its end (`GET /v1/events?after=<nextCursor>&limit=100`, one request at a
 * time, timed). Afterwards the reader reads what is left: every adjustment answered 201 wrote two events
 * (transaction.posted, stock.changed), so events read = 2 × the 201s, or some were missed.
 */
async function feedPoll(def, common) {
  const { service, headers } = common;
  const page = async (cursor, limit) => {
    const t0 = performance.now();
    const res = await fetch(`${service.base}/v1/events?limit=${limit}${cursor ? `&after=${cursor}` : ''}`, { headers });
    const body = await res.json();
    return { ms: performance.now() - t0, status: res.status, body };
  };
  const drain = async (cursor) => {
    let events = 0;
    for (;;) {
      const p = await page(cursor, 500);
      if (p.status !== 200) throw new Error(`GET /v1/events: ${p.status} ${JSON.stringify(p.body).slice(0, 300)}`);
      cursor = p.body.nextCursor;
      events += p.body.data.length;
      if (!p.body.data.length) return { cursor, events };
    }
  };
  let { cursor } = await drain(undefined);
  let stop = false;
  let events = 0;
  let errors = 0;
  const latencies = [];
  const reader = (async () => {
    while (!stop) {
      const started = performance.now();
      const p = await page(cursor, 100);
      latencies.push({ started, ms: p.ms });
      if (p.status !== 200) errors++;
      else {
        events += p.body.data.length;
        cursor = p.body.nextCursor;
      }
    }
  })();
  const result = await runScenario('feedPoll', { ...def, label: `${def.label}, a reader polling the feed` }, common);
  stop = true;
  await reader;
  const rest = await drain(cursor);
  // Like every scenario's latencies, the polls of the measured part only (not those of its warm-up).
  const measured = latencies.filter((l) => l.started >= result.measuredFrom).map((l) => l.ms).sort((a, b) => a - b);
  const at = (q) => Math.round(measured[Math.min(measured.length - 1, Math.floor(q * measured.length))] ?? NaN);
  const created = (result.byStatus[201] ?? 0) + (result.warmup.byStatus[201] ?? 0);
  result.feed = { polls: measured.length, p50: at(0.5), p99: at(0.99), max: Math.round(measured[measured.length - 1] ?? NaN), events: events + rest.events, expected: 2 * created, errors };
  return result;
}

/**
 * Large documents: a sales order of 1,000 lines (as many distinct stocked items, up to 1,000) is opened
 * and then shipped alone, timed; then three such orders (same items, lines in other orders) ship at
 * once. The ship allocates and posts the whole document set-based, in the ledger's lock order.
 */
/** A JSON call to the service that answers `{status, data, text}`. */
const caller = (base, headers) => async (method, path, body) => {
  const res = await fetch(`${base}${path}`, { method, headers: { ...headers, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, data: text ? JSON.parse(text).data : null, text };
};

/**
 * The receipts scenario's purchase orders: RECEIPT_ORDERS approved orders, each of one line of a seeded
 * balance's item ordered far beyond what a run receives, so every receipt of 1 is accepted.
 */
const RECEIPT_ORDERS = 200;
async function receiptOrders(base, headers, ctx) {
  const call = caller(base, headers);
  const supplier = await call('POST', '/v1/procurement/suppliers', { code: `BENCH-${randomUUID().slice(0, 8)}`, name: 'Bench supplier' });
  if (supplier.status !== 201) throw new Error(`create a supplier: ${supplier.status} ${supplier.text.slice(0, 300)}`);
  const orders = [];
  for (let i = 0; i < RECEIPT_ORDERS; i++) {
    const key = ctx.keys[(i * 37) % ctx.keys.length];
    const po = await call('POST', '/v1/procurement/purchase-orders', {
      supplierId: supplier.data.id, facilityId: ctx.facility, lines: [{ itemId: key.itemId, qtyOrdered: 100_000_000, unitPrice: 1 }],
    });
    if (po.status !== 201) throw new Error(`create a purchase order: ${po.status} ${po.text.slice(0, 300)}`);
    for (const action of ['submit', 'approve']) {
      const r = await call('POST', `/v1/procurement/purchase-orders/${po.data.id}/${action}`, {});
      if (r.status !== 200) throw new Error(`${action} a purchase order: ${r.status} ${r.text.slice(0, 300)}`);
    }
    orders.push({ id: po.data.id, lineId: po.data.lines[0].id, locationId: key.locationId });
  }
  return orders;
}

async function shipLarge(base, headers, ctx, pg) {
  const call = caller(base, headers);
  const customer = await call('POST', '/v1/sales/customers', { code: `BENCH-${randomUUID().slice(0, 8)}`, name: 'Bench customer' });
  if (customer.status !== 201) throw new Error(`create a customer: ${customer.status} ${customer.text.slice(0, 300)}`);
  const items = [...new Set(ctx.keys.map((k) => k.itemId))].slice(0, 1000);
  const lines = Array.from({ length: 1000 }, (_, i) => i);
  const opened = async (shift) => {
    const order = await call('POST', '/v1/sales/orders', {
      customerId: customer.data.id, facilityId: ctx.facility, lines: lines.map((i) => ({ itemId: items[(i * 7 + shift) % items.length], qty: 1, unitPrice: 1 })),
    });
    if (order.status !== 201) throw new Error(`create a 1,000-line order: ${order.status} ${order.text.slice(0, 300)}`);
    const open = await call('POST', `/v1/sales/orders/${order.data.id}/open`, {});
    if (open.status !== 200) throw new Error(`open a 1,000-line order: ${open.status} ${open.text.slice(0, 300)}`);
    return order.data.id;
  };
  const timed = async (ids) => {
    const t0 = performance.now();
    const statuses = await Promise.all(ids.map(async (id) => (await call('POST', `/v1/sales/orders/${id}/ship`, {})).status));
    return { ms: Math.round(performance.now() - t0), statuses };
  };
  const first = await opened(0);
  if (STATEMENTS) await resetStatements(pg);
  const one = await timed([first]);
  if (STATEMENTS) await statementProfile(pg, 1);
  const three = await timed([await opened(1), await opened(2), await opened(3)]);
  return {
    label: `sales order ship, 1,000 lines over ${items.length} items`, oneMs: one.ms, oneStatus: one.statuses[0], threeMs: three.ms, threeStatuses: three.statuses,
    errors: [...one.statuses, ...three.statuses].filter((s) => s !== 200).length,
  };
}

async function cleanup() {
  while (cleanups.length) await cleanups.pop()().catch((err) => log(`cleanup: ${err.message}`));
}

process.once('SIGINT', () => cleanup().finally(() => process.exit(130)));
main().then(
  () => cleanup().then(() => process.exit(0)),
  (err) => {
    process.stderr.write(`bench failed: ${err.stack ?? err}\n`);
    cleanup().finally(() => process.exit(1));
  },
);
