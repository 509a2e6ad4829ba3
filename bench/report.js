'use strict';
// The benchmark's one table, its targets (PASS/MISS, informational) and bench/results.json.
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

const ORDER = ['adjustSpread', 'adjustSpreadCold', 'adjustSpreadAgain', 'adjustSpreadEventsOn', 'adjustSpreadEventsOff', 'adjustHot', 'adjustHotEventsOn', 'adjustHotEventsOff', 'adjustSpreadWebhookOn', 'adjustSpreadWebhookOff', 'adjustKeyed', 'reserveCancel', 'receive', 'feedPoll', 'itemGet', 'itemSearch', 'transactionsSmall', 'availabilitySmall', 'transactionsLarge', 'availabilityLarge', 'transactionsFirstPage', 'transactionsDeepCursor'];
const fmt = (x, digits = 0) => (x === null || x === undefined || Number.isNaN(x) ? '–' : Number(x).toFixed(digits));
const ratio = (a, b) => (a && b ? a / b : null);
const mark = (ok) => (ok === null ? 'n/a ' : ok ? 'PASS' : 'MISS');

function table(rows, log) {
  const cols = [
    ['scenario', 52, (r) => r.label, 'left'],
    ['req/s', 8, (r) => fmt(r.rps)],
    ['p50 ms', 7, (r) => fmt(r.p50)],
    ['p99 ms', 7, (r) => fmt(r.p99)],
    ['errors', 7, (r) => fmt(r.errors)],
    ['RSS MB', 7, (r) => fmt(r.peakRssMb)],
    ['svc CPU', 8, (r) => fmt(r.serviceCpuMs, 2)],
    ['db CPU', 7, (r) => fmt(r.dbCpuMs, 2)],
    ['c/flush', 7, (r) => fmt(r.wal?.commitsPerFlush, 2)],
    ['p/flush', 7, (r) => fmt(r.wal?.postingsPerFlush, 2)],
    ['×TPC-B', 7, (r) => fmt(r.vsTpcb, 3)],
    ['×select', 8, (r) => fmt(r.vsSelect, 3)],
    ['×http', 7, (r) => fmt(r.vsHttp, 3)],
  ];
  const line = (cells) => cells.map((c, i) => (cols[i][3] === 'left' ? c.padEnd(cols[i][1]) : c.padStart(cols[i][1]))).join(' ');
  log(line(cols.map((c) => c[0])));
  log('-'.repeat(cols.reduce((s, c) => s + c[1] + 1, -1)));
  for (const r of rows) log(line(cols.map((c) => String(c[2](r)))));
}

/**
 * The durable targets (32 connections, durable PostgreSQL, 2 cores; bench/README "Targets"): they replace the
 * first, looser ones measured without fsync (0.25 × TPC-B and p99 < 150 ms for adjustments, 0.06 × bare
 * Node and p99 < 50 ms for the item read, 300 MB).
 */
const DURABLE = { spreadVsTpcb: 0.45, hotVsTpcb: 0.4, postingsPerFlush: 3, adjustP99Ms: 100, itemVsHttp: 0.1, itemP99Ms: 25, peakRssMb: 250 };

/** Express's share of Fastify's throughput (CONTRACT §10: Express ≥ 0.7 × Fastify on item reads and adjustments). */
const PLATFORM_RATIO = 0.7;
const RATIO_SCENARIOS = ['itemGet', 'adjustSpread', 'adjustHot'];

/**
 * The issue's targets, each { target, value, ok } with ok null when its yardstick is missing (or, for a
 * platform's figures, when the run was not durable); per platform, then the platforms compared. Expects the
 * ratios to the baselines set on each result (report() sets them).
 */
function targets({ results, baselines: b, servicePeakRss, seedChecks, config }) {
  const t = [];
  for (const platform of Object.keys(results)) {
    // Figures are judged on durable runs only (without flushed commits they say nothing: n/a); checks (`check`) always.
    const judged = platformTargets(results[platform], b, servicePeakRss[platform], platform);
    t.push(...(config?.durability?.durable === false ? judged.map((x) => (x.check ? x : { ...x, ok: null })) : judged));
  }
  const { express, fastify } = results;
  if (express && fastify) {
    for (const k of RATIO_SCENARIOS) {
      if (!express[k] || !fastify[k]) continue;
      const x = express[k].rps / fastify[k].rps;
      t.push({ target: `${fastify[k].label.replace(/ \[fastify\]$/, '')}: Express ≥ ${PLATFORM_RATIO} × Fastify`, value: `${fmt(x, 3)} × (${fmt(express[k].rps)} vs ${fmt(fastify[k].rps)} req/s)`, ok: x >= PLATFORM_RATIO });
    }
  }
  const all = Object.values(results).flatMap((r) => ORDER.map((k) => r[k]).filter(Boolean));
  const errors = all.reduce((s, x) => s + x.errors, 0);
  t.push({ target: 'zero errors (any status but the expected, socket errors, timeouts; warm-ups included)', value: String(errors), ok: errors === 0 });
  const checks = all.filter((x) => x.check);
  const violations = [...checks.map((x) => x.check), ...seedChecks].reduce((s, c) => s + c.violations.length, 0);
  const mismatches = checks.filter((x) => !x.check.matches).length;
  t.push({ target: 'zero invariant violations (ledger:verify after each write scenario and after seeding)', value: String(violations), ok: violations === 0 });
  t.push({ target: 'every 201 is exactly one ledger transaction written (reservations: 201/200 = rows)', value: mismatches ? `${mismatches} mismatched` : 'all match', ok: mismatches === 0 });
  return t;
}

/** The targets one platform's figures must meet. */
function platformTargets(r, b, servicePeakRss, platform) {
  const t = [];
  for (const [k, vsTpcb] of [['adjustSpread', DURABLE.spreadVsTpcb], ['adjustHot', DURABLE.hotVsTpcb]]) {
    const x = r[k];
    if (!x) continue;
    t.push({ target: `${x.label}: ≥ ${fmt(vsTpcb, 2)} × pgbench TPC-B`, value: b.tpcb ? `${fmt(x.vsTpcb, 3)} × (${fmt(x.rps)} vs ${fmt(b.tpcb.rps)})` : 'no pgbench', ok: b.tpcb ? x.vsTpcb >= vsTpcb : null });
    if (k === 'adjustSpread') {
      const p = x.wal?.postingsPerFlush;
      t.push({ target: `${x.label}: ≥ ${DURABLE.postingsPerFlush} postings per WAL flush`, value: fmt(p, 2), ok: p === null || p === undefined ? null : p >= DURABLE.postingsPerFlush });
    }
    t.push({ target: `${x.label}: p99 < ${DURABLE.adjustP99Ms} ms`, value: `${fmt(x.p99)} ms`, ok: x.p99 < DURABLE.adjustP99Ms });
  }
  for (const k of ['adjustSpread', 'adjustHot']) {
    const [on, off] = [r[`${k}EventsOn`], r[`${k}EventsOff`]];
    if (!on || !off) continue;
    const e = on.events;
    t.push({ target: `${on.label.replace(/, events on.*/, '')}: with events ≥ 0.80 × without (alternating runs) [${platform}]`,
      value: `${fmt(e.ratio, 3)} × (${fmt(on.rps)} vs ${fmt(off.rps)} req/s; rounds ${e.ratios.map((x) => fmt(x, 2)).join(', ')})`, ok: e.ratio >= 0.8 });
  }
  const hooked = r.adjustSpreadWebhookOn;
  if (hooked && r.adjustSpreadWebhookOff) {
    const w = hooked.webhook;
    t.push({ target: `adjustments with a webhook on stock.changed ≥ 0.80 × without (alternating runs) [${platform}]`,
      value: `${fmt(w.ratio, 3)} × (${fmt(hooked.rps)} vs ${fmt(r.adjustSpreadWebhookOff.rps)} req/s; rounds ${w.ratios.map((x) => fmt(x, 2)).join(', ')})`, ok: w.ratio >= 0.8 });
    t.push({ target: `webhook event → delivery lag p99 < 2 s [${platform}]`, value: `${fmt(w.lagP99)} ms (p50 ${fmt(w.lagP50)} ms, max ${fmt(w.lagMax)} ms)`, ok: w.lagP99 !== null && w.lagP99 < 2000 });
    t.push({ target: `the webhook receives every event of the adjustments [${platform}]`, value: `${w.received} of ${w.expected} (${w.duplicates} repeated)`, ok: w.received === w.expected, check: true });
  }
  const cold = r.adjustSpreadCold;
  if (cold) {
    t.push({ target: `${cold.label}: the balance look-up's generic plan probes the whole key`, value: cold.cold.plan.lookup.join(' / ').slice(0, 160), ok: cold.cold.plan.fullKey, check: true });
    const warm = r.adjustSpreadAgain;
    if (warm) {
      const x = cold.rps / warm.rps;
      t.push({ target: `${cold.label}: within 10% of the analyzed database (alternating runs)`,
        value: `${fmt(x, 3)} × (${fmt(cold.rps)} vs ${fmt(warm.rps)} req/s; db CPU ${fmt(cold.dbCpuMs, 2)} vs ${fmt(warm.dbCpuMs, 2)} ms)`, ok: x >= 0.9 });
    }
  }
  const feed = r.feedPoll?.feed;
  if (feed) {
    t.push({ target: `GET /v1/events?after= while adjustments run: p99 < 50 ms [${platform}]`, value: `${fmt(feed.p99)} ms (p50 ${fmt(feed.p50)} ms, ${feed.polls} polls)`, ok: feed.p99 < 50 });
    t.push({ target: `the feed reader misses no event of the adjustments [${platform}]`, value: `${feed.events} of ${feed.expected}`, ok: feed.events === feed.expected && feed.errors === 0, check: true });
  }
  const g = r.itemGet;
  if (g) {
    t.push({ target: `${g.label}: ≥ ${fmt(DURABLE.itemVsHttp, 2)} × bare Node http`, value: `${fmt(g.vsHttp, 3)} × (${fmt(g.rps)} vs ${fmt(b.bareHttp?.rps)})`, ok: b.bareHttp ? g.vsHttp >= DURABLE.itemVsHttp : null });
    t.push({ target: `${g.label}: p99 < ${DURABLE.itemP99Ms} ms`, value: `${fmt(g.p99)} ms`, ok: g.p99 < DURABLE.itemP99Ms });
  }
  for (const [small, large] of [['transactionsSmall', 'transactionsLarge'], ['availabilitySmall', 'availabilityLarge']]) {
    const s = r[small];
    const l = r[large];
    if (!s || !l) continue;
    // "within 2×": at least half the requests/s, at most twice the p99 (1 ms floor: latencies are whole ms)
    const ok = l.rps >= s.rps / 2 && l.p99 <= 2 * Math.max(1, s.p99);
    t.push({ target: `${l.label}: within 2 × the small ledger`, value: `${fmt(l.rps)} vs ${fmt(s.rps)} req/s, p99 ${fmt(l.p99)} vs ${fmt(s.p99)} ms`, ok });
  }
  const [p1, deep] = [r.transactionsFirstPage, r.transactionsDeepCursor];
  if (p1 && deep) {
    // Cursor paging: the deep page costs within 2 × page 1 (at least half the requests/s, at most twice the p99)
    const ok = deep.rps >= p1.rps / 2 && deep.p99 <= 2 * Math.max(1, p1.p99);
    t.push({ target: `transactions page ${deep.deep ? deep.deep.page.toLocaleString('en-US') : '–'} by cursor: within 2 × page 1`, value: `${fmt(deep.rps)} vs ${fmt(p1.rps)} req/s, p99 ${fmt(deep.p99)} vs ${fmt(p1.p99)} ms`, ok });
  }
  const ship = r.shipLarge;
  if (ship) {
    t.push({ target: `${ship.label}: one ship < 1 s`, value: `${ship.oneMs} ms`, ok: ship.oneStatus === 200 && ship.oneMs < 1000 });
    t.push({ target: `${ship.label}: three at once, every one 200`, value: `${ship.threeStatuses.join(', ')} in ${ship.threeMs} ms`, ok: ship.errors === 0, check: true });
  }
  t.push({ target: `service peak RSS (VmHWM, every scenario) < ${DURABLE.peakRssMb} MB [${platform}]`, value: `${fmt(servicePeakRss)} MB`, ok: servicePeakRss === null || servicePeakRss === undefined ? null : servicePeakRss < DURABLE.peakRssMb });
  return t;
}

function report(run, log) {
  const { results, baselines: b } = run;
  const platforms = Object.keys(results);
  for (const r of platforms.flatMap((p) => ORDER.map((k) => results[p][k]).filter(Boolean))) {
    r.vsTpcb = ratio(r.rps, b.tpcb?.rps);
    r.vsSelect = ratio(r.rps, b.select?.rps);
    r.vsHttp = ratio(r.rps, b.bareHttp?.rps);
  }
  // Each scenario on each platform, side by side, then the baselines (pgbench, bare Node http).
  const rows = [...ORDER.flatMap((k) => platforms.map((p) => results[p][k]).filter(Boolean)), ...['tpcb', 'select', 'bareHttp'].filter((k) => b[k]).map((k) => b[k])];
  const c = run.config;
  const d = c.durability;
  const settings = `fsync=${d.fsync}, synchronous_commit=${d.synchronousCommit}, full_page_writes=${d.fullPageWrites}`;
  const banner = () => {
    if (d.durable) return;
    log('#'.repeat(100));
    log(`##  NOT DURABLE (${settings}${c.unsafeFast ? ', BENCH_PG_UNSAFE_FAST=1' : ''}):`);
    log('##  commits are not flushed to disk. Not comparable with production or with the figures in bench/README.');
    log('#'.repeat(100));
  };
  log('');
  banner();
  log(`${c.connections} connections, ${c.seconds} s per scenario, ${c.cpus} CPUs, Node ${c.node}, PostgreSQL ${c.postgres} (${c.database}, ${settings})` +
    `; RSS = the service process's peak, sampled every 100 ms; svc/db CPU = CPU ms per request of the service process and of PostgreSQL; ` +
    `c/flush = commits per WAL flush (write scenarios, pgbench TPC-B); p/flush = ledger postings per WAL flush (TX numbers taken in the window)`);
  table(rows, log);
  banner();
  if (c.loadBefore > c.cpus / 2)
    log(`warning: the machine was busy when the run started (load average ${c.loadBefore.toFixed(1)} on ${c.cpus} CPUs): the figures are noisy`);

  log('\nchecks after each write scenario');
  for (const r of ORDER.flatMap((k) => platforms.map((p) => results[p][k])).filter((x) => x?.check)) {
    const v = r.check.violations;
    log(`  ${r.label}: ${r.check.text} → ${r.check.matches ? 'match' : 'MISMATCH'}; ${r.check.checks} invariants: ${v.length ? v.map((x) => `${x.check} (${x.count} rows)`).join(', ') : 'all hold'}`);
    for (const x of v) for (const row of x.rows.slice(0, 3)) log(`      ${x.check}: ${JSON.stringify(row)}`);
  }
  const undrained = platforms.flatMap((p) => ORDER.filter((k) => results[p][k] && !results[p][k].drained).map((k) => `${k} [${p}]`));
  if (undrained.length) log(`  note: ${undrained.join(', ')} had to be stopped hard (a connection got no answer); counts may include unanswered requests`);

  const t = targets(run);
  log('\ntargets (informational)');
  for (const x of t) log(`  ${mark(x.ok)}  ${x.target.padEnd(86)} ${x.value}`);

  const file = join(__dirname, 'results.json');
  writeFileSync(file, `${JSON.stringify({ when: new Date().toISOString(), durable: d.durable, ...(d.durable ? {} : { warning: "NOT DURABLE: commits not flushed to disk" }), ...run, targets: t }, null, 2)}\n`);
  log(`\nwritten to ${file}`);
}

module.exports = { report, targets };
