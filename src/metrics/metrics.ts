import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';

/** The pg pool under TypeORM's Postgres driver. */
interface PgPool {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/**
 * The service's Prometheus metrics, in a registry of this application's own (several apps may share a
 * process, as in the tests). Labels are bounded: route patterns (never raw URLs or ids), methods,
 * status codes, error codes, transaction types — no tenant or user.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  private readonly requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  private readonly duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration until the response was sent, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  private readonly postings = new Counter({
    name: 'ledger_postings_total',
    help: 'Ledger transactions written, by type and by way (direct: one statement, batched with its tenant\'s others; full: a posting of its own), counted when written, in the unit of work that commits them',
    labelNames: ['type', 'way'] as const,
    registers: [this.registry],
  });

  /** Group commit of one tenant's writes (PostingBatches), per kind: direct postings and new reservations. */
  private readonly batchMetrics = {
    posting: batchMetrics(this.registry, { batches: 'ledger_direct_batches_total', members: 'ledger_direct_batch_postings_total', waiting: 'ledger_direct_batch_waiting' }, 'direct postings'),
    reservation: batchMetrics(this.registry, { batches: 'ledger_reservation_batches_total', members: 'ledger_reservation_batch_members_total', waiting: 'ledger_reservation_batch_waiting' }, 'new reservations'),
  };

  private readonly refusals = new Counter({
    name: 'http_errors_total',
    help: 'Error responses, by contract error code and status',
    labelNames: ['error', 'status'] as const,
    registers: [this.registry],
  });

  private readonly webhookAttempts = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook delivery attempts made by this process, by outcome (delivered, failed: retried later, given_up: no attempt left, gone: 410 turned the webhook off)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  private readonly webhookLag = new Histogram({
    name: 'webhook_delivery_lag_seconds',
    help: 'From an event (its occurredAt) to its delivery (the 2xx answer), retries included',
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600, 86400],
    registers: [this.registry],
  });

  constructor(@InjectDataSource() dataSource: DataSource) {
    const pool = () => (dataSource.driver as unknown as { master?: PgPool }).master;
    new Gauge({
      name: 'db_pool_connections',
      help: 'Database pool connections of this process, by state (in_use, idle)',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const p = pool();
        this.set({ state: 'in_use' }, p ? p.totalCount - p.idleCount : 0);
        this.set({ state: 'idle' }, p ? p.idleCount : 0);
      },
    });
    new Gauge({
      name: 'db_pool_waiting',
      help: 'Requests waiting for a database connection in this process',
      registers: [this.registry],
      collect() {
        this.set(pool()?.waitingCount ?? 0);
      },
    });
  }

  /** Counts and times a request whose response has been sent (called by src/http/platform.ts RequestObserver). */
  observe(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.requests.inc(labels);
    this.duration.observe(labels, seconds);
  }

  posted(type: string, way: 'direct' | 'full'): void {
    this.postings.inc({ type, way });
  }

  /** A batch of `size` direct postings (or new reservations), written whole or not at all. */
  directBatch(size: number, written: boolean, kind: BatchKind = 'posting'): void {
    const labels = { outcome: written ? 'written' : 'fell_back' };
    this.batchMetrics[kind].batches.inc(labels);
    this.batchMetrics[kind].members.inc(labels, size);
  }

  /** How many direct postings (or new reservations) wait for their tenant's next batch now. */
  directBatchWaiting(n: number, kind: BatchKind = 'posting'): void {
    this.batchMetrics[kind].waiting.set(n);
  }

  /** One webhook attempt's outcome; `lagSeconds` for a delivery. */
  webhookAttempt(outcome: 'delivered' | 'failed' | 'given_up' | 'gone', lagSeconds?: number): void {
    this.webhookAttempts.inc({ outcome });
    if (lagSeconds !== undefined) this.webhookLag.observe(lagSeconds);
  }

  refused(error: string, status: number): void {
    this.refusals.inc({ error, status: String(status) });
  }
}

type BatchKind = 'posting' | 'reservation';

/** The three metrics of one kind of batched write: batches and their members by outcome, and members waiting now. */
function batchMetrics(registry: Registry, names: { batches: string; members: string; waiting: string }, what: string) {
  return {
    batches: new Counter({
      name: names.batches,
      help: `Batches of ${what} (two or more of a tenant in one transaction and one COMMIT), by outcome (written; fell_back: not written, each went the full way)`,
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    members: new Counter({ name: names.members, help: `${what[0].toUpperCase()}${what.slice(1)} in batches, by outcome (as ${names.batches})`, labelNames: ['outcome'] as const, registers: [registry] }),
    waiting: new Gauge({ name: names.waiting, help: `${what[0].toUpperCase()}${what.slice(1)} waiting in this process for their tenant's next batch`, registers: [registry] }),
  };
}
