'use strict';
// The HTTP scenarios and the autocannon driver that runs them.
//
// The driver stops cleanly: at the deadline each connection finishes its request in flight (and, for
// a sequence such as create + cancel, the rest of the sequence) and then sends nothing more, so every
// request sent is answered and counted. That is what lets a write scenario be checked exactly:
// the number of 201s must equal the ledger transactions written.
const { randomUUID } = require('node:crypto');
const { readdirSync, readFileSync } = require('node:fs');
const autocannon = require('autocannon');
const { itemName, itemNo } = require('./seed');

const pick = (list) => list[Math.floor(Math.random() * list.length)];

/** Samples a process's resident set size every 100 ms; `stop()` returns the peak seen, in MB. */
function rssSampler(pid) {
  const read = () => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      return m ? Number(m[1]) / 1024 : null;
    } catch {
      return null; // not Linux, or the process is gone
    }
  };
  let peak = read();
  const timer = setInterval(() => {
    const now = read();
    if (now !== null && (peak === null || now > peak)) peak = now;
  }, 100);
  return { stop: () => (clearInterval(timer), peak) };
}

/** The process's high-water mark (VmHWM, MB) since it started, or null. */
function peakRss(pid) {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

const TICK_MS = 10; // Linux USER_HZ = 100
const statOf = (pid) => {
  try {
    // fields after "(comm)": state ppid … utime(14) stime(15) cutime(16) cstime(17), 1-based from pid
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    return { ppid: Number(f[1]), own: Number(f[11]) + Number(f[12]), reaped: Number(f[13]) + Number(f[14]) };
  } catch {
    return null;
  }
};

/**
 * CPU time (ms) used so far by a process, or by a process tree one level deep (the PostgreSQL
 * postmaster: itself, its reaped children, and its live backends). Null where /proc is unreadable.
 */
function cpuMs(pid, { tree = false } = {}) {
  const root = statOf(pid);
  if (!root) return null;
  let ticks = root.own + (tree ? root.reaped : 0);
  if (tree) {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const child = statOf(entry);
      if (child?.ppid === pid) ticks += child.own;
    }
  }
  return ticks * TICK_MS;
}

/** The PostgreSQL postmaster serving backend `pid` when it runs on this machine, else null. */
function postmasterOf(pid) {
  const ppid = statOf(pid)?.ppid;
  try {
    return ppid && /postgres/.test(readFileSync(`/proc/${ppid}/cmdline`, 'utf8')) ? ppid : null;
  } catch {
    return null;
  }
}

/**
 * Runs `requests` (an autocannon request sequence) on `connections` connections for `seconds`, then
 * drains. Returns requests/s over the whole run, p50/p99 latency (ms), the count per status code,
 * `errors` (socket errors, timeouts and any status not in `expect`) and a few unexpected bodies.
 */
function drive({ base, connections, seconds, headers, requests, expect }) {
  const byStatus = {};
  const samples = [];
  const lastIndex = requests.length - 1;
  const watched = requests.map((r) => ({
    ...r,
    onResponse(status, body, context) {
      if (!expect.includes(status) && samples.length < 3) samples.push(`${status} ${String(body).slice(0, 300)}`);
      r.onResponse?.(status, body, context);
    },
  }));
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const deadline = started + seconds * 1000;
    let last = started;
    let responses = 0;
    const instance = autocannon(
      { url: base, connections, headers, requests: watched, duration: seconds + 3600, timeout: 30 },
      (err, result) => {
        clearTimeout(hardStop);
        if (err) return reject(err);
        const unexpected = Object.entries(byStatus).reduce((n, [code, c]) => n + (expect.includes(Number(code)) ? 0 : c), 0);
        resolve({
          requests: responses,
          seconds: (last - started) / 1000,
          rps: responses / Math.max(0.001, (last - started) / 1000),
          p50: result.latency.p50,
          p99: result.latency.p99,
          byStatus,
          errors: result.errors + unexpected,
          socketErrors: result.errors,
          timeouts: result.timeouts,
          samples,
          drained: !stoppedHard,
        });
      },
    );
    let stoppedHard = false;
    // Safety net: a connection that never gets an answer cannot drain; stop it 30 s after the deadline.
    const hardStop = setTimeout(() => ((stoppedHard = true), instance.stop()), seconds * 1000 + 30_000);
    instance.on('response', (client, status) => {
      responses++;
      byStatus[status] = (byStatus[status] ?? 0) + 1;
      last = Date.now();
      // Past the deadline, at the end of its sequence: this connection sends nothing more (autocannon 9's
      // client closes once reqsMade reaches responseMax, right after this event; internals, hence the safety net).
      if (last >= deadline && client.requestIterator.currentRequestIndex === lastIndex) client.responseMax = client.reqsMade;
    });
  });
}

/** Scenario definitions. `ctx`: what seedBase returned (facility, balance keys, hot keys, items) plus `itemIds`. */
function scenarios(ctx) {
  const json = { 'content-type': 'application/json' };
  // keyed: each request with an Idempotency-Key of its own (a client that retries safely)
  const adjust = (balances, keyed = false) => [
    {
      method: 'POST',
      path: '/v1/inventory/adjustments',
      headers: json,
      setupRequest: (req) => {
        const b = pick(balances);
        const body = JSON.stringify({ itemId: b.itemId, locationId: b.locationId, qtyDelta: Math.random() < 0.5 ? 1 : -1, reason: 'bench' });
        return { ...req, body, ...(keyed && { headers: { ...req.headers, 'idempotency-key': randomUUID() } }) };
      },
    },
  ];
  const B = ctx.keys.length.toLocaleString('en-US');
  const searchTerm = () => {
    const n = 1 + Math.floor(Math.random() * ctx.items);
    // half type-ahead on the item number (up to 100 matches), half a fragment of a name (a few matches)
    if (Math.random() < 0.5) return itemNo(n).slice(0, -2);
    const name = itemName(n);
    const at = 7 + Math.floor(Math.random() * 26);
    return name.slice(at, at + 6);
  };
  return {
    adjustSpread: { label: `adjustments, ${B} balances`, write: 'ledger', expect: [201], requests: adjust(ctx.keys) },
    adjustHot: { label: `adjustments, ${ctx.hot.length} hot balances`, write: 'ledger', expect: [201], requests: adjust(ctx.hot) },
    adjustKeyed: { label: `adjustments, ${B} balances, Idempotency-Key`, write: 'ledger', expect: [201], requests: adjust(ctx.keys, true) },
    reserveCancel: {
      label: 'reservation create + cancel',
      write: 'reservations',
      expect: [200, 201],
      requests: [
        {
          method: 'POST',
          path: '/v1/inventory/reservations',
          headers: json,
          setupRequest: (req) => ({ ...req, body: JSON.stringify({ itemId: pick(ctx.keys).itemId, facilityId: ctx.facility, qty: 1 }) }),
          onResponse: (status, body, context) => {
            context.reservationId = status === 201 ? JSON.parse(body).data.id : undefined;
          },
        },
        {
          method: 'POST',
          setupRequest: (req, context) => context.reservationId && { ...req, path: `/v1/inventory/reservations/${context.reservationId}/cancel` },
        },
      ],
    },
    // A document that posts: receipts of 1 against RECEIPT_ORDERS approved purchase orders (ctx.orders, made
    // just before), each a `receipt` transaction of one line, a GR and a TX number of the tenant.
    receive: {
      label: 'purchase order receipts, one line each',
      write: 'ledger',
      expect: [201],
      requests: [
        {
          method: 'POST',
          headers: json,
          setupRequest: (req) => {
            const o = pick(ctx.orders);
            return { ...req, path: `/v1/procurement/purchase-orders/${o.id}/receipts`, body: JSON.stringify({ lines: [{ poLineId: o.lineId, qty: 1, locationId: o.locationId }] }) };
          },
        },
      ],
    },
    itemGet: {
      label: 'GET /v1/items/{id}',
      expect: [200],
      requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/v1/items/${pick(ctx.itemIds)}` }) }],
    },
    itemSearch: {
      label: 'GET /v1/items?q=',
      expect: [200],
      requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/v1/items?q=${encodeURIComponent(searchTerm())}` }) }],
    },
    transactions: { label: 'GET /v1/inventory/transactions', expect: [200], requests: [{ method: 'GET', path: '/v1/inventory/transactions' }] },
    availability: { label: 'GET /v1/inventory/availability', expect: [200], requests: [{ method: 'GET', path: '/v1/inventory/availability' }] },
  };
}

module.exports = { drive, scenarios, rssSampler, peakRss, cpuMs, postmasterOf };
