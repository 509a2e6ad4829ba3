import { DIST_DIR as DIST } from './dist';

/** What the lock helpers need of a database handle (a DataSource, a QueryRunner, a pg Client via `rowsOf`). */
export type Query = (text: string, params?: unknown[]) => Promise<Array<Record<string, unknown>>>;

/** A backend that waits for a lock another backend holds, as pg_stat_activity shows it. */
export interface Waiter {
  pid: number;
  /** `Lock` while it waits for a heavyweight lock (a row, a table, a transaction id). */
  waitEventType: string | null;
  waitEvent: string | null;
  query: string;
  blockedBy: number[];
}

/** The backend pid of a connection (a pg Client, a QueryRunner, a unit of work's manager). */
export async function backendPid(query: Query): Promise<number> {
  const [row] = await query('SELECT pg_backend_pid() AS pid');
  return Number(row.pid);
}

/**
 * Resolves once a backend waits for a lock held by the backend `holder` — the one connection that
 * holds the contested rows, so another spec's waiting statements cannot satisfy it — and returns it.
 * `statement` (a prefix of its SQL text) also requires the waiter to run that statement. Polls
 * pg_blocking_pids(): no timing assumption, only an upper bound for a waiter that never comes.
 */
export async function waiterBlockedBy(query: Query, holder: number, opts: { statement?: string; timeoutMs?: number } = {}): Promise<Waiter> {
  const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
  for (;;) {
    const rows = await query(
      `SELECT pid, wait_event_type, wait_event, query, pg_blocking_pids(pid) AS blocked_by
         FROM pg_stat_activity
        WHERE $1::int = ANY(pg_blocking_pids(pid)) AND ($2::text IS NULL OR starts_with(query, $2::text))`,
      [holder, opts.statement ?? null],
    );
    if (rows.length === 1) {
      const [r] = rows;
      return {
        pid: Number(r.pid),
        waitEventType: r.wait_event_type as string | null,
        waitEvent: r.wait_event as string | null,
        query: r.query as string,
        blockedBy: (r.blocked_by as Array<number | string>).map(Number),
      };
    }
    if (rows.length > 1) throw new Error(`more than one backend waits for ${holder}: ${JSON.stringify(rows)}`);
    if (Date.now() > deadline) {
      throw new Error(`no backend${opts.statement ? ` running "${opts.statement}…"` : ''} waited for a lock of backend ${holder} within ${opts.timeoutMs ?? 20_000} ms`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * How many backends wait, directly or behind each other, on locks the backend `holder` holds: polls
 * pg_blocking_pids() until `n` do (or `timeoutMs` pass) and returns the count (the caller asserts it).
 */
export async function blockedBehind(query: Query, holder: number, n: number, timeoutMs = 30_000): Promise<number> {
  let blocked = 0;
  for (const start = Date.now(); Date.now() - start < timeoutMs; await new Promise((r) => setTimeout(r, 20))) {
    const rows = (await query(
      `SELECT pid, pg_blocking_pids(pid) AS blockers FROM pg_stat_activity WHERE datname = current_database() AND cardinality(pg_blocking_pids(pid)) > 0`,
    )) as Array<{ pid: number; blockers: number[] }>;
    const behind = new Set<number>([holder]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const r of rows) if (!behind.has(r.pid) && r.blockers.some((b) => behind.has(b))) (behind.add(r.pid), (grew = true));
    }
    blocked = behind.size - 1;
    if (blocked >= n) break;
  }
  return blocked;
}

/**
 * Waits until `n` direct postings wait in the app for their tenant's next batch (DirectPostings; the gauge
 * `ledger_direct_batch_waiting`, or `gaugeName`: `ledger_reservation_batch_waiting` for new reservations):
 * they are in flight, queued in the service, none of them sent yet. `app`: the Nest application under test.
 */
export async function batchWaiting(app: { get(token: unknown): unknown }, n: number, timeoutMs = 20_000, gaugeName = 'ledger_direct_batch_waiting'): Promise<void> {
  const gauge = metricOf(app, gaugeName);
  let now = 0;
  for (const start = Date.now(); Date.now() - start < timeoutMs; await new Promise((r) => setTimeout(r, 10))) {
    now = (await gauge.get()).values[0]?.value ?? 0;
    if (now >= n) return;
  }
  throw new Error(`only ${now} of ${n} waited for their batch (${gaugeName}) after ${timeoutMs} ms`);
}

type MetricValues = { values: Array<{ value: number; labels: Record<string, string | number> }> };

/** One of the app's metrics (Metrics.registry), by name. */
function metricOf(app: { get(token: unknown): unknown }, name: string): { get(): Promise<MetricValues> } {
  const { Metrics } = (globalThis as unknown as { __nativeRequire: NodeJS.Require }).__nativeRequire(`${DIST}/metrics/metrics.js`) as { Metrics: unknown };
  return (app.get(Metrics) as { registry: { getSingleMetric(name: string): { get(): Promise<MetricValues> } } }).registry.getSingleMetric(name);
}

/**
 * The app's batched writes by outcome so far: `written` (in batches written whole) and `fellBack` (in batches
 * that went the full way). `counterName`: `ledger_direct_batch_postings_total` or `ledger_reservation_batch_members_total`.
 */
export async function batchMembers(app: { get(token: unknown): unknown }, counterName: string): Promise<{ written: number; fellBack: number }> {
  const { values } = await metricOf(app, counterName).get();
  const of = (outcome: string) => values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
  return { written: of('written'), fellBack: of('fell_back') };
}

/** The app's ledger transactions written so far of `type`, by way (`ledger_postings_total{way}`: direct or full). */
export async function postingsByWay(app: { get(token: unknown): unknown }, type: string): Promise<{ direct: number; full: number }> {
  const { values } = await metricOf(app, 'ledger_postings_total').get();
  const of = (way: string) => values.filter((v) => v.labels.type === type && v.labels.way === way).reduce((n, v) => n + v.value, 0);
  return { direct: of('direct'), full: of('full') };
}

/** A tenant's numbers of `prefix` (TX: ledger transactions, RS: reservations) are 1..N, each once, and its counter row says N. */
export async function expectNumbersGapFree(query: Query, tenantId: string, prefix: 'TX' | 'RS'): Promise<void> {
  const [table, column] = prefix === 'TX' ? ['ledger_transactions', 'txn_no'] : ['reservations', 'reservation_no'];
  const [row] = await query(
    `SELECT count(*)::int AS n, count(DISTINCT ${column})::int AS distinct_nos, max(substr(${column}, 4)::int) AS top,
            (SELECT last_value::int FROM document_sequences WHERE tenant_id = $1 AND prefix = '${prefix}') AS counter
       FROM ${table} WHERE tenant_id = $1`,
    [tenantId],
  );
  expect(row).toEqual({ n: row.top, distinct_nos: row.top, top: row.counter, counter: row.counter });
}
