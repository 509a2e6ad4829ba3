import { Injectable, Logger } from '@nestjs/common';
import { ClsService } from 'nestjs-cls';
import { ACROSS_TENANTS, BackgroundJob } from '../common/background-job';
import { Settings } from '../config/settings';
import { UnitOfWork } from '../database/unit-of-work';
import { Metrics } from '../metrics/metrics';
import { DeliverySlots } from './delivery-slots';
import { Deliveries, InlineDeliveries } from './delivery-jobs';
import { DeliveryThread } from './delivery-thread';
import { EarlyFailures, MadeAttempt, segmentRecords } from './attempt-records';
import { MAX_ATTEMPTS, outcomeOf } from './retry-schedule';
import { SecretBox } from './secret-box';
import { LEASE_SECONDS, leaseSegment, SegmentToSend } from './segment-lease';
import { AttemptOutcome, AttemptRecord, claimDueAttempts, claimTurn, ClaimedAttempt, finishAttempts, recordSegment, recordSegmentEarly, tenantsWithDueAttempts, webhooksWithDueAttempts, webhooksWithEvents } from './webhooks.sql';

/** An attempt's outcome waiting to be recorded, and the attempt's wait for it. */
interface PendingRecord {
  a: ClaimedAttempt;
  outcome: AttemptOutcome;
  resolve: (recorded: boolean) => void;
  reject: (err: unknown) => void;
}

/** Recorded as the user of the workers' units of work. */
export const WEBHOOK_JOB_USER = 'system:webhooks';
const MAX_WEBHOOKS_PER_RUN = 1000;
const MAX_TENANTS_PER_RUN = 1000;

/**
 * Delivers the event feed to webhooks, in the service process (WEBHOOKS_ENABLED), every WEBHOOK_POLL_MS:
 *
 * 1. First attempts, straight from the feed (migration WebhookSegments). For each active webhook with new
 *    events (below the feed's horizon, as GET /v1/events reads it), one transaction locks the webhook (SKIP
 *    LOCKED: one lease at a time per webhook), moves its feed position past up to SEGMENT_MAX events of its
 *    types and leases that segment to this process. The segment's events are sent (Deliveries),
 *    a few at once (failures recorded as they come: EarlyFailures); then one statement deletes the segment (only
 *    while the lease is still ours) and inserts each attempt as it ended, with the retries it schedules. One row write and a share of two commits per
 *    event. A segment whose process died is leased again once its lease has run out, and sent again whole
 *    (what a lost answer explains). A 410, a stopping service, a failed delivery thread or the end of the
 *    segment's sending time ends it early: its unsent events are recorded as pending first attempts.
 * 2. Retries (and first attempts recorded pending): for each tenant with due attempts, claim some (SKIP
 *    LOCKED + a lease, committed), then send each without holding a transaction; record the outcome (only
 *    while the lease is still ours) with the next attempt, in one transaction.
 *
 * At most WEBHOOK_CONCURRENCY attempts are in flight in a process and WEBHOOK_TENANT_CONCURRENCY per
 * tenant (retries: across processes, as leases count; a segment: in its process), and one webhook at most
 * all but one of its tenant's (its retries across processes; its feed's senders and retries in a process):
 * one slow receiver holds a few slots of its own tenant, no one else's. Sends run beside the timer.
 *
 * Everything that is pending lives in the database (the feed and the webhook's position, the segments, the
 * pending rows), so a restart or a crash during a backoff loses nothing.
 */
@Injectable()
export class WebhookDispatcher extends BackgroundJob {
  private readonly logger = new Logger(WebhookDispatcher.name);
  /** Retries in flight, and the webhooks whose feed this process is sending (by tenant:webhook). */
  private readonly sending = new Set<Promise<void>>();
  private readonly feeding = new Map<string, Promise<void>>();
  /** Tenants with a due webhook that found no slot at the last run: their loops yield after their segment. */
  private readonly waiting = new Set<string>();
  /**
   * Per tenant, the webhooks whose due retries found no room at the tenant's last claim because their feed's
   * senders held it: the feed yields after its segment and starts again after a claim, so neither waits for
   * the other's end.
   */
  private readonly retriesDue = new Map<string, Set<string>>();
  /** Attempts in flight in this process (retries and feeds' senders). */
  private readonly slots: DeliverySlots;
  private readonly stopping = new AbortController();
  private dispatching?: Promise<number>;
  /** Outcomes waiting to be recorded, per tenant, and the tenant's recording in progress. */
  private readonly outcomes = new Map<string, PendingRecord[]>();
  private readonly recording = new Map<string, Promise<void>>();
  /** Where the attempts' HTTP exchanges are made: on this event loop, or on a thread of their own (WEBHOOK_DELIVERY_THREAD). */
  private readonly deliveries: Deliveries;

  constructor(
    private readonly settings: Settings,
    uow: UnitOfWork,
    private readonly box: SecretBox,
    private readonly metrics: Metrics,
    cls: ClsService,
  ) {
    super(cls, uow, WEBHOOK_JOB_USER);
    this.deliveries = settings.WEBHOOK_DELIVERY_THREAD ? new DeliveryThread(settings.WEBHOOK_ALLOWED_HOSTS) : new InlineDeliveries(settings.WEBHOOK_ALLOWED_HOSTS);
    this.slots = new DeliverySlots(settings.WEBHOOK_CONCURRENCY, settings.WEBHOOK_TENANT_CONCURRENCY);
  }

  protected intervalMs(): number {
    return this.settings.WEBHOOKS_ENABLED ? this.settings.WEBHOOK_POLL_MS : 0;
  }

  async onModuleDestroy(): Promise<void> {
    // Attempts in flight end now: a segment's unsent events are recorded pending; a claimed retry stays
    // unrecorded, its lease runs out and another process makes it.
    this.stopping.abort();
    await super.onModuleDestroy();
    await this.dispatching?.catch(() => undefined);
    await this.deliveries.stop();
    await Promise.allSettled([...this.sending, ...this.feeding.values()]);
  }

  /** One run: starts sending the feeds with new events, then claims and starts the due retries; returns how many it started. */
  protected async work(): Promise<number> {
    let started = 0;
    try {
      started += await this.feed();
    } catch (err) {
      this.logger.warn({ err }, 'webhook feed run failed; the next run retries');
    }
    try {
      return started + (await this.dispatch());
    } catch (err) {
      this.logger.warn({ err }, 'webhook delivery run failed; the next run retries');
      return started;
    }
  }

  /** Whether the webhook's due retries wait for room its feed holds (`retriesDue`). */
  private retriesFirst(tenantId: string, webhookId: string): boolean {
    return !!this.retriesDue.get(tenantId)?.has(webhookId);
  }

  /** Starts sending the feed of each webhook with something to send that this process is not sending yet. */
  private async feed(): Promise<number> {
    const all = await this.inUnitOfWork(ACROSS_TENANTS, (m) => webhooksWithEvents(m, MAX_WEBHOOKS_PER_RUN));
    // Not a webhook whose retries go first: the claim after this run takes them.
    const due = all.filter((w) => !this.feeding.has(`${w.tenant_id}:${w.webhook_id}`) && !this.retriesFirst(w.tenant_id, w.webhook_id));
    // A different webhook first each run: when slots are short, none always comes last.
    const offset = Math.floor(Math.random() * Math.max(1, due.length));
    const left = new Map<string, number>();
    for (const w of due) left.set(w.tenant_id, (left.get(w.tenant_id) ?? 0) + 1);
    this.waiting.clear();
    let started = 0;
    for (let i = 0; i < due.length && !this.stopping.signal.aborted; i++) {
      const { tenant_id: tenantId, webhook_id: webhookId } = due[(i + offset) % due.length];
      const key = `${tenantId}:${webhookId}`;
      // A loop holds its senders from start to end, within the process's, tenant's and webhook's bounds.
      const room = this.slots.tenantRoom(tenantId);
      const own = this.slots.webhookRoom(tenantId, webhookId);
      const slots = Math.min(this.slots.free(), Math.max(1, Math.floor(room / left.get(tenantId)!)), room, own);
      left.set(tenantId, left.get(tenantId)! - 1);
      if (slots <= 0) {
        if (own > 0) this.waiting.add(tenantId); // its loops end after their segment: this one gets slots at the next run
        continue;
      }
      const feeding = this.feedWebhook(tenantId, webhookId, slots)
        .catch((err: unknown) => this.logger.warn({ err }, `webhook ${webhookId}: sending its feed failed; the next run retries (a leased segment once its lease runs out)`))
        .finally(() => {
          this.feeding.delete(key);
          if (this.retriesFirst(tenantId, webhookId)) this.refill();
        });
      this.feeding.set(key, feeding);
      started++;
    }
    return started;
  }

  /**
   * The webhook's feed, a segment at a time, with `senders` attempts at once: lease, send, record, while
   * there is a segment. The record commits on its own (a failure to lease the next one cannot undo it).
   * A sender with nothing more to start in its segment gives its slot back at once (a retry recorded
   * early may need it); the next segment takes them again as far as there is room.
   */
  private async feedWebhook(tenantId: string, webhookId: string, senders: number): Promise<void> {
    let held = 0;
    try {
      while (!this.stopping.signal.aborted) {
        const more = Math.min(senders - held, this.slots.free(), this.slots.tenantRoom(tenantId), this.slots.webhookRoom(tenantId, webhookId));
        if (more > 0) this.slots.take(tenantId, webhookId, more, true);
        held += Math.max(0, more);
        if (held <= 0) return;
        if (!(await this.feedSegment(tenantId, webhookId, held, () => (held--, this.slots.give(tenantId, webhookId, 1, true))))) return;
      }
    } finally {
      this.slots.give(tenantId, webhookId, held, true);
    }
  }

  /** Leases, sends and records one segment of the webhook's feed; false when there is none, or when the feed is to yield. */
  private async feedSegment(tenantId: string, webhookId: string, senders: number, idle: () => void): Promise<boolean> {
    const leaseTakenAt = Date.now();
    const leased = await this.inUnitOfWork(tenantId, (m) => leaseSegment(m, tenantId, webhookId, leaseTakenAt));
    if (!leased) return false;
    const { records, made } = await this.sendSegment(tenantId, webhookId, leased, senders, idle);
    const gone = made.some((x) => x.outcome.gone);
    const recorded = await this.inUnitOfWork(tenantId, (m) => recordSegment(m, tenantId, leased.segment, records, gone));
    if (!recorded) {
      this.logger.warn(`webhook ${webhookId}: segment ${leased.segment.id} not recorded: its lease had run out (another process sends it again) or the webhook was deleted`);
      return false;
    }
    for (const x of made) this.counted(webhookId, x.eventId, 1, x.outcome, x.occurredAt, x.answeredAt);
    return !(gone || this.waiting.has(tenantId) || this.retriesFirst(tenantId, webhookId));
  }

  /**
   * Sends a segment's events, `senders` at once (none starts after a 410 or past its sendBy), its failures
   * recorded as they come while it sends (EarlyFailures), and returns the rest of its attempts as they are to
   * be recorded, and those made with their outcomes (segmentRecords).
   */
  private async sendSegment(tenantId: string, webhookId: string, s: SegmentToSend, senders: number, idle: () => void): Promise<{ records: AttemptRecord[]; made: MadeAttempt[] }> {
    const key = this.signingKey(s.secretCiphertext, tenantId, webhookId);
    const early = new EarlyFailures(s.events, this.settings.WEBHOOK_BACKOFF_SCALE, async (records, made) => {
      const recorded = await this.inUnitOfWork(tenantId, (m) => recordSegmentEarly(m, tenantId, s.segment, records));
      if (recorded) for (const x of made) this.counted(webhookId, x.eventId, 1, x.outcome, x.occurredAt, x.answeredAt);
      return recorded;
    });
    const items = s.events.map((e) => ({ eventId: e.id, body: e.body }));
    const made = await this.deliveries.send(s.url, key, items, { concurrency: senders, sendBy: s.sendBy }, { failed: (i, x) => early.failed(i, x), idle });
    return segmentRecords(s.events, made, this.settings.WEBHOOK_BACKOFF_SCALE, await early.end());
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
    if (this.slots.free() <= 0 || this.stopping.signal.aborted) return 0;
    const tenants = await this.inUnitOfWork(ACROSS_TENANTS, (m) => tenantsWithDueAttempts(m, MAX_TENANTS_PER_RUN));
    // A tenant no longer listed has no due retries left (another process took them): its feeds go on.
    const listed = new Set(tenants.map((t) => t.tenant_id));
    for (const tenantId of this.retriesDue.keys()) if (!listed.has(tenantId)) this.retriesDue.delete(tenantId);
    // A different tenant first each run: when slots are short, no tenant always comes last.
    const offset = Math.floor(Math.random() * Math.max(1, tenants.length));
    let started = 0;
    for (let i = 0; i < tenants.length && this.slots.free() > 0 && !this.stopping.signal.aborted; i++) {
      const tenantId = tenants[(i + offset) % tenants.length].tenant_id;
      const room = Math.min(this.slots.free(), this.slots.tenantRoom(tenantId));
      if (room <= 0) continue;
      const limits = { max: room, tenantMax: this.slots.tenantMax, webhookMax: this.slots.webhookMax, busy: this.slots.feedsOf(tenantId) };
      const feeds = [...limits.busy.keys()];
      const { claimed, waiting } = await this.inUnitOfWork(tenantId, async (m) => {
        if (!(await claimTurn(m, tenantId))) return { claimed: [], waiting: undefined };
        // Sent together (the check runs after the claim on the connection, so it sees what the claim leased).
        const [got, left] = await Promise.all([claimDueAttempts(m, tenantId, limits, LEASE_SECONDS), feeds.length ? webhooksWithDueAttempts(m, tenantId, feeds) : []]);
        return { claimed: got, waiting: left };
      });
      // The tenant's retries were claimed as far as there was room: the feeds that still hold it yield.
      if (waiting?.length) this.retriesDue.set(tenantId, new Set(waiting.map((w) => w.webhook_id)));
      else if (waiting) this.retriesDue.delete(tenantId);
      for (const a of claimed) this.start(tenantId, a);
      started += claimed.length;
    }
    return started;
  }

  private start(tenantId: string, a: ClaimedAttempt): void {
    this.slots.take(tenantId, a.webhook_id, 1);
    const attempt: Promise<void> = this.attempt(tenantId, a)
      .catch((err: unknown) => this.logger.warn({ err }, 'a webhook attempt could not be recorded; it is made again once its lease runs out'))
      .finally(() => {
        this.sending.delete(attempt);
        const left = this.slots.give(tenantId, a.webhook_id, 1);
        // Claim again once half of the tenant's slots are free, not for every slot: a claim is a commit
        // (a WAL flush) of its own, and refilling one slot at a time made one per attempt.
        if (left <= Math.floor(this.slots.tenantMax / 2) || this.slots.used <= Math.floor(this.slots.max / 2)) this.refill();
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

  /** The webhook's signing key, or why its secret could not be opened (the attempt then fails with it). */
  private signingKey(ciphertext: string, tenantId: string, webhookId: string): Buffer | Error {
    try {
      return SecretBox.signingKey(this.box.open(ciphertext, tenantId, webhookId));
    } catch (err) {
      return err as Error;
    }
  }

  /** A claimed attempt: made, its outcome recorded. */
  private async attempt(tenantId: string, a: ClaimedAttempt): Promise<void> {
    const [made] = await this.deliveries.send(a.url, this.signingKey(a.secret_ciphertext, tenantId, a.webhook_id), [{ eventId: a.event_id, body: a.body }], { concurrency: 1, sendBy: Infinity });
    if (!made) return; // not made (the service is stopping, or the delivery thread failed): made again once the lease runs out
    const outcome = outcomeOf(a.attempt, made.result, made.attemptedAt, this.settings.WEBHOOK_BACKOFF_SCALE, made.answeredAt);
    const recorded = await this.record(tenantId, a, outcome);
    if (!recorded) {
      this.logger.warn(`webhook ${a.webhook_id}: attempt ${a.attempt} of event ${a.event_id} not recorded: its lease had run out (another process makes it) or the webhook was deleted`);
      return;
    }
    this.counted(a.webhook_id, a.event_id, a.attempt, outcome, a.occurred_at, made.answeredAt);
  }

  /** A recorded attempt in the metrics (and the log, when it was the last). */
  private counted(webhookId: string, eventId: string, attempt: number, o: AttemptOutcome, occurredAt: Date, answeredAt: Date): void {
    if (o.status === 'delivered') this.metrics.webhookAttempt('delivered', (answeredAt.getTime() - new Date(occurredAt).getTime()) / 1000);
    else this.metrics.webhookAttempt(o.gone ? 'gone' : o.nextAttemptAt ? 'failed' : 'given_up');
    if (!o.nextAttemptAt && o.status === 'failed' && attempt >= MAX_ATTEMPTS) this.logger.warn(`webhook ${webhookId}: event ${eventId} given up after ${attempt} attempts`);
  }
}
