'use strict';
// The yardsticks each scenario is divided by: pgbench (TPC-B and select-only, same database, same
// concurrency) and a bare Node `http` server answering a fixed body (same client, same concurrency).
const { execFile, spawn } = require('node:child_process');
const { accessSync, constants, mkdtempSync, readdirSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { delimiter, join } = require('node:path');
const { promisify } = require('node:util');
const { cpuMs, drive } = require('./scenarios');

const run = promisify(execFile);

/** pgbench from BENCH_PGBENCH, PATH, or /usr/lib/postgresql/<newest>/bin; null when absent or BENCH_PGBENCH=off. */
function findPgbench() {
  const given = process.env.BENCH_PGBENCH;
  if (given === 'off' || given === '0') return null;
  const executable = (file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (given) return executable(given) ? given : null;
  const versions = (() => {
    try {
      return readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
    } catch {
      return [];
    }
  })();
  const candidates = [
    ...(process.env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, 'pgbench')),
    ...versions.map((v) => `/usr/lib/postgresql/${v}/bin/pgbench`),
  ];
  return candidates.find(executable) ?? null;
}

const percentile = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : null);

/** One timed pgbench run; latencies from its per-transaction log (column 3, µs). */
async function pgbenchRun(bin, url, { connections, seconds, selectOnly, dbCpu, wal: walMeter }) {
  const dir = mkdtempSync(join(tmpdir(), 'inventory-bench-pgbench-'));
  try {
    const args = ['-n', ...(selectOnly ? ['-S'] : []), '-c', String(connections), '-j', '1', '-T', String(seconds), '-l', '--log-prefix', join(dir, 'log'), url];
    const walMeasure = walMeter && !selectOnly ? walMeter(seconds) : null;
    const cpu0 = dbCpu();
    const { stdout } = await run(bin, args, { maxBuffer: 16 << 20 });
    const cpu1 = dbCpu();
    const wal = walMeasure ? await walMeasure : null;
    const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(stdout)?.[1]);
    if (Number.isNaN(tps)) throw new Error(`pgbench ${args.join(' ')}: no tps in its output:\n${stdout}`);
    const failed = Number(/number of failed transactions: (\d+)/.exec(stdout)?.[1] ?? 0);
    const processed = Number(/number of transactions actually processed: (\d+)/.exec(stdout)?.[1] ?? 0);
    const latencies = readdirSync(dir)
      .flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n'))
      .filter(Boolean)
      .map((line) => Number(line.split(' ')[2]) / 1000)
      .sort((a, b) => a - b);
    const dbCpuMs = cpu0 === null || cpu1 === null ? null : (cpu1 - cpu0) / processed;
    return { rps: tps, requests: processed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors: failed, dbCpuMs, wal };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** pgbench -i (scale = BENCH_PGBENCH_SCALE, default the concurrency), TPC-B, select-only, then drops its tables. */
async function pgbench(bin, url, { connections, seconds, scale, log, dbCpu, wal, checkpoint }) {
  const { stdout: version } = await run(bin, ['--version']);
  log(`  pgbench: ${version.trim()} (${bin}), scale ${scale}`);
  await run(bin, ['-i', '-q', '-s', String(scale), '-I', 'dtGvp', url], { maxBuffer: 16 << 20 });
  // As after the service's seeding: the load's dirty pages written out before the timed runs.
  await checkpoint?.();
  try {
    const tpcb = await pgbenchRun(bin, url, { connections, seconds, dbCpu, wal });
    log(`  pgbench TPC-B: ${tpcb.rps.toFixed(0)} tps${tpcb.wal?.commitsPerFlush ? `, ${tpcb.wal.commitsPerFlush.toFixed(2)} commits/WAL flush` : ''}`);
    const select = await pgbenchRun(bin, url, { connections, seconds, selectOnly: true, dbCpu });
    log(`  pgbench select-only: ${select.rps.toFixed(0)} tps`);
    return { version: version.trim(), scale, tpcb, select };
  } finally {
    await run(bin, ['-i', '-I', 'd', url]).catch(() => undefined);
  }
}

/** A bare Node http server in its own process answering `body` to every request. */
async function bareHttpServer(body) {
  const code = `
    const body = Buffer.from(process.env.BODY);
    require('node:http').createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
      res.end(body);
    }).listen(0, '127.0.0.1', function () { process.stdout.write(this.address().port + '\\n'); });`;
  const child = spawn(process.execPath, ['-e', code], { env: { PATH: process.env.PATH, BODY: body }, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    child.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim())));
    child.once('exit', (c) => reject(new Error(`bare http server exited with ${c}`)));
  });
  return {
    base: `http://127.0.0.1:${port}`,
    pid: child.pid,
    stop: () => new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', resolve), child.kill('SIGTERM')))),
  };
}

/** The bare server driven like a scenario (warm-up, then measured); its CPU ms per request too. */
async function bareHttp(body, { connections, seconds, warmup }) {
  const server = await bareHttpServer(body);
  try {
    const opts = { base: server.base, connections, requests: [{ method: 'GET' }], expect: [200] };
    const warm = await drive({ ...opts, seconds: warmup || 0.5 });
    const cpu0 = cpuMs(server.pid);
    const r = await drive({ ...opts, seconds });
    const serviceCpuMs = cpu0 === null ? null : (cpuMs(server.pid) - cpu0) / r.requests;
    return { label: 'bare Node http (same body)', rps: r.rps, p50: r.p50, p99: r.p99, requests: r.requests, errors: r.errors + warm.errors, serviceCpuMs };
  } finally {
    await server.stop();
  }
}

module.exports = { findPgbench, pgbench, bareHttp };
