import { Injectable, Logger } from '@nestjs/common';
import { ClsService } from 'nestjs-cls';
import { ACROSS_TENANTS, BackgroundJob } from '../common/background-job';
import { Settings } from '../config/settings';
import { UnitOfWork } from '../database/unit-of-work';
import { readFeed } from '../events/events.sql';
import { eventView, typeFilterOf, typeMatches } from '../events/events.service';
import { Metrics } from '../metrics/metrics';
import { closeDeliveryConnections, send, SendResult, signature } from './delivery';
import { MAX_ATTEMPTS, outcomeOf } from './retry-schedule';
import { SecretBox } from './secret-box';
import { checkTarget, TargetRefused } from './targets';
import { AttemptOutcome, claimDueAttempts, ClaimedAttempt, enqueueEvents, finishAttempts, lockForFanOut, tenantsWithDueAttempts, webhooksWithEvents } from './webhooks.sql';

/** An attempt's outcome waiting to be recorded, and the attempt's wait for it. */
interface PendingRecord {
  a: ClaimedAttempt;
  outcome: AttemptOutcome;
  resolve: (recorded: boolean) => void;
  reject: (err: unknown) => void;
}

/** Recorded as the user of the workers' units of work. */
export const WEBHOOK_JOB_USER = 'system:webhooks';
/** Events read from the feed per fan-out transaction, and transactions per webhook per run. */
const FAN_OUT_BATCH = 500;
const FAN_OUT_BATCHES = 10;
const MAX_WEBHOOKS_PER_RUN = 1000;
const MAX_TENANTS_PER_RUN = 1000;
/**
 * How long a claimed attempt is this process's (seconds): longer than an attempt can take (the target's
 * DNS check, 5 s, and the 15 s answer timeout). A process that dies mid-attempt leaves it to be made again
 * once this has passed.
 */
const LEASE_SECONDS = 60;

/**
 * Delivers the event feed to webhooks, in the service process (WEBHOOKS_ENABLED), every WEBHOOK_POLL_MS:
 *
 * 1. Fan-out: for each active webhook with new events in the feed (below the feed's horizon, as
 *    GET /v1/events reads it), one transaction locks the webhook (SKIP LOCKED: one process at a time per
 *    webhook), writes a pending attempt per matching event (its JSON as the feed shows it) and moves the
 *    webhook's feed position past the events read. Nothing is lost or written twice whichever process
 *    crashes when: the attempts and the position commit together.
 * 2. Delivery: for each tenant with due attempts, claim some (SKIP LOCKED + a lease, committed), then send
 *    each without holding a transaction; record the outcome (only while the lease is still ours) with the
 *    next attempt, in one transaction. At most WEBHOOK_CONCURRENCY attempts are in flight in a process and
 *    WEBHOOK_TENANT_CONCURRENCY per tenant (across processes, as leases count), so one slow receiver holds
 *    a few slots of its own tenant and no one else's. Sends run beside the timer: the next runs go on.
 *
 * Everything that is pending lives in the database, so a restart or a crash during a backoff loses
 * nothing; an attempt is made by one process, or again by another only when its lease ran out with no
 * outcome recorded (the first process died mid-attempt: a lost answer).
 */
@Injectable()
export class WebhookDispatcher extends BackgroundJob {
  private readonly logger = new Logger(WebhookDispatcher.name);
  private readonly sending = new Set<Promise<void>>();
  private readonly perTenant = new Map<string, number>();
  private readonly stopping = new AbortController();
  private dispatching?: Promise<number>;
  /** Outcomes waiting to be recorded, per tenant, and the tenant's recording in progress. */
  private readonly outcomes = new Map<string, PendingRecord[]>();
  private readonly recording = new Map<string, Promise<void>>();

  constructor(
    private readonly settings: Settings,
    uow: UnitOfWork,
    private readonly box: SecretBox,
    private readonly metrics: Metrics,
    cls: ClsService,
  ) {
    super(cls, uow, WEBHOOK_JOB_USER);
  }

  protected intervalMs(): number {
    return this.settings.WEBHOOKS_ENABLED ? this.settings.WEBHOOK_POLL_MS : 0;
  }

  async onModuleDestroy(): Promise<void> {
    // Attempts in flight end now, unrecorded: their leases run out and another process makes them.
    this.stopping.abort();
    await super.onModuleDestroy();
    await this.dispatching?.catch(() => undefined);
    await Promise.allSettled([...this.sending]);
    closeDeliveryConnections();
  }

  /** One run: fan-out, then claims and starts the due attempts; returns how many it started. */
  protected async work(): Promise<number> {
    try {
      await this.fanOut();
    } catch (err) {
      this.logger.warn({ err }, 'webhook fan-out failed; the next run retries');
    }
    try {
      return await this.dispatch();
    } catch (err) {
      this.logger.warn({ err }, 'webhook delivery run failed; the next run retries');
      return 0;
    }
  }

  /** One run, then until the attempts in flight have been recorded (for tests). Returns how many attempts the run started. */
  async deliverNow(): Promise<number> {
    const started = await this.runOnce();
    await Promise.allSettled([...this.sending]);
    return started;
  }

  private async fanOut(): Promise<void> {
    const due = await this.inUnitOfWork(ACROSS_TENANTS, (m) => webhooksWithEvents(m, MAX_WEBHOOKS_PER_RUN));
    for (const { tenant_id: tenantId, webhook_id: webhookId } of due) {
      for (let i = 0; i < FAN_OUT_BATCHES && !this.stopping.signal.aborted; i++) {
        const read = await this.inUnitOfWork(tenantId, (m) => this.fanOutBatch(m, tenantId, webhookId));
        if (read < FAN_OUT_BATCH) break;
      }
    }
  }

  /** One batch of the webhook's feed into pending attempts; returns how many events it read. */
  private async fanOutBatch(m: Parameters<typeof readFeed>[0], tenantId: string, webhookId: string): Promise<number> {
    const [hook] = await lockForFanOut(m, tenantId, webhookId);
    if (!hook) return 0;
    const rows = await readFeed(m, tenantId, { txid: hook.feed_txid, seq: hook.feed_seq, fromCursor: false }, { exact: [], prefixes: [] }, FAN_OUT_BATCH);
    const events = rows.filter((r) => r.id !== null);
    if (!events.length) return 0;
    const filter = typeFilterOf(hook.types);
    const wanted = events.filter((e) => typeMatches(filter, e.type!));
    const last = events[events.length - 1];
    await enqueueEvents(
      m,
      tenantId,
      webhookId,
      wanted.map((e) => ({ eventId: e.id!, eventType: e.type!, occurredAt: e.occurred_at!, body: JSON.stringify(eventView(e as typeof e & { id: string })) })),
      { txid: last.txid!, seq: last.seq! },
    );
    return events.length;
  }

  /**
   * Claims and starts due attempts (one claiming pass at a time in a process: the timer's run and the
   * refills after finished attempts share it).
   */
  private dispatch(): Promise<number> {
    this.dispatching ??= this.claimAndStart().finally(() => (this.dispatching = undefined));
    return this.dispatching;
  }

  /** A slot freed: claim more at once instead of at the next poll (a backlog drains at the receivers' pace). */
  private refill(): void {
    if (this.intervalMs() > 0 && !this.stopping.signal.aborted)
      this.dispatch().catch((err: unknown) => this.logger.warn({ err }, 'webhook delivery run failed; the next run retries'));
  }

  private async claimAndStart(): Promise<number> {
    const free = () => this.settings.WEBHOOK_CONCURRENCY - this.sending.size;
    if (free() <= 0 || this.stopping.signal.aborted) return 0;
    const tenants = await this.inUnitOfWork(ACROSS_TENANTS, (m) => tenantsWithDueAttempts(m, MAX_TENANTS_PER_RUN));
    // A different tenant first each run: when slots are short, no tenant always comes last.
    const offset = Math.floor(Math.random() * Math.max(1, tenants.length));
    let started = 0;
    for (let i = 0; i < tenants.length && free() > 0; i++) {
      const tenantId = tenants[(i + offset) % tenants.length].tenant_id;
      const tenantMax = this.settings.WEBHOOK_TENANT_CONCURRENCY;
      const room = Math.min(free(), tenantMax - (this.perTenant.get(tenantId) ?? 0));
      if (room <= 0) continue;
      const claimed = await this.inUnitOfWork(tenantId, (m) => claimDueAttempts(m, tenantId, room, tenantMax, LEASE_SECONDS));
      for (const a of claimed) this.start(tenantId, a);
      started += claimed.length;
    }
    return started;
  }

  private start(tenantId: string, a: ClaimedAttempt): void {
    this.perTenant.set(tenantId, (this.perTenant.get(tenantId) ?? 0) + 1);
    const attempt: Promise<void> = this.attempt(tenantId, a)
      .catch((err: unknown) => this.logger.warn({ err }, 'a webhook attempt could not be recorded; it is made again once its lease runs out'))
      .finally(() => {
        this.sending.delete(attempt);
        const n = (this.perTenant.get(tenantId) ?? 1) - 1;
        if (n > 0) this.perTenant.set(tenantId, n);
        else this.perTenant.delete(tenantId);
        // Claim again once half of the tenant's slots are free, not for every slot: a claim is a commit
        // (a WAL flush) of its own, and refilling one slot at a time made one per attempt.
        if (n <= Math.floor(this.settings.WEBHOOK_TENANT_CONCURRENCY / 2) || this.sending.size <= Math.floor(this.settings.WEBHOOK_CONCURRENCY / 2)) this.refill();
      });
    this.sending.add(attempt);
  }

  /**
   * Records an attempt's outcome (see finishAttempts): the outcomes of a tenant's attempts that finish while
   * its previous ones are being recorded wait and are then recorded together (one statement, one commit
   * and one WAL flush for all of them, not one each). Resolves with whether it was recorded; a failure
   * fails the batch, whose attempts are then made again once their leases run out.
   */
  private record(tenantId: string, a: ClaimedAttempt, outcome: AttemptOutcome): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      const waiting = this.outcomes.get(tenantId);
      if (waiting) waiting.push({ a, outcome, resolve, reject });
      else this.outcomes.set(tenantId, [{ a, outcome, resolve, reject }]);
      if (!this.recording.has(tenantId)) {
        const recording = this.recordWaiting(tenantId).finally(() => this.recording.delete(tenantId));
        this.recording.set(tenantId, recording);
      }
    });
  }

  /** Records the tenant's waiting outcomes, a transaction per batch, until none is waiting. */
  private async recordWaiting(tenantId: string): Promise<void> {
    for (let batch = this.outcomes.get(tenantId); batch?.length; batch = this.outcomes.get(tenantId)) {
      this.outcomes.delete(tenantId);
      const records = batch;
      try {
        const recorded = await this.inUnitOfWork(tenantId, (m) => finishAttempts(m, tenantId, records.map((r) => ({ a: r.a, o: r.outcome }))));
        for (const r of records) r.resolve(recorded.has(r.a.id));
      } catch (err) {
        for (const r of records) r.reject(err);
      }
    }
  }

  /** One attempt: the target checked again, the signed POST to the checked address, the outcome recorded. */
  private async attempt(tenantId: string, a: ClaimedAttempt): Promise<void> {
    let result: SendResult;
    let attemptedAt = new Date();
    if (this.stopping.signal.aborted) return; // claimed as the service stopped: the lease runs out, another process makes it
    try {
      const target = await checkTarget(a.url, this.settings.WEBHOOK_ALLOWED_HOSTS);
      const key = SecretBox.signingKey(this.box.open(a.secret_ciphertext, tenantId, a.webhook_id));
      attemptedAt = new Date();
      const timestamp = Math.floor(attemptedAt.getTime() / 1000);
      const headers = { 'webhook-id': a.event_id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature(key, a.event_id, timestamp, a.body) };
      result = await send(target, headers, a.body, this.stopping.signal);
    } catch (err) {
      const message = err instanceof TargetRefused ? `target refused: ${err.message}` : `not sent: ${(err as Error).message}`;
      result = { status: null, body: null, retryAfter: null, error: message };
    }
    if (this.stopping.signal.aborted) return;
    const outcome = outcomeOf(a.attempt, result, attemptedAt, this.settings.WEBHOOK_BACKOFF_SCALE);
    const recorded = await this.record(tenantId, a, outcome);
    if (!recorded) {
      this.logger.warn(`webhook ${a.webhook_id}: attempt ${a.attempt} of event ${a.event_id} not recorded: its lease had run out (another process makes it) or the webhook was deleted`);
      return;
    }
    if (outcome.status === 'delivered') this.metrics.webhookAttempt('delivered', (Date.now() - new Date(a.occurred_at).getTime()) / 1000);
    else this.metrics.webhookAttempt(outcome.gone ? 'gone' : outcome.nextAttemptAt ? 'failed' : 'given_up');
    if (!outcome.nextAttemptAt && outcome.status === 'failed' && a.attempt >= MAX_ATTEMPTS)
      this.logger.warn(`webhook ${a.webhook_id}: event ${a.event_id} given up after ${a.attempt} attempts`);
  }
}
