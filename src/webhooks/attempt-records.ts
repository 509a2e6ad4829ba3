import type { Exchange } from './delivery-jobs';
import { outcomeOf } from './retry-schedule';
import type { AttemptOutcome, AttemptRecord, SegmentEvent } from './webhooks.sql';

/** An attempt a segment made: its event, its outcome and when its answer came. */
export interface MadeAttempt {
  eventId: string;
  occurredAt: Date;
  outcome: AttemptOutcome;
  answeredAt: Date;
}

/**
 * How long after a segment's first failed attempt (one that schedules a retry) the failures are recorded
 * if the segment is still sending: its retry is due 5 s after the answer (CONTRACT §9: the first retry
 * within 10 s), and would otherwise wait for the segment's slowest answer (up to 15 s more).
 */
export const EARLY_RECORD_MS = 1_000;

/** A made attempt's records (it, and its retry when one is scheduled: due the schedule's delay after the answer) and its outcome. */
function madeRecords(e: SegmentEvent, x: Exchange, backoffScale: number): { records: AttemptRecord[]; made: MadeAttempt } {
  const event = { eventId: e.id, eventType: e.type, occurredAt: e.occurred_at };
  const o = outcomeOf(1, x.result, x.attemptedAt, backoffScale, x.answeredAt);
  const records: AttemptRecord[] = [
    { ...event, attempt: 1, status: o.status, responseStatus: o.responseStatus, responseBody: o.responseBody, error: o.error, attemptedAt: o.attemptedAt, nextAttemptAt: o.nextAttemptAt, body: null },
  ];
  if (o.nextAttemptAt) records.push({ ...event, ...NONE, attempt: 2, status: 'pending', nextAttemptAt: o.nextAttemptAt, body: e.body });
  return { records, made: { eventId: e.id, occurredAt: event.occurredAt, outcome: o, answeredAt: x.answeredAt } };
}

const NONE = { responseStatus: null, responseBody: null, error: null, attemptedAt: null };

/**
 * A sent segment's attempts as they are recorded (recordSegment), in its events' order: each made one (with
 * its retry, when one is scheduled), and each event not sent (`made[i]` undefined: after a 410, as the
 * service stops, past the segment's sendBy, or when the delivery thread failed) as a pending first attempt,
 * due now. Those recorded early (`early`, by index: EarlyFailures) are left out. `made`: the attempts made,
 * with their outcomes.
 */
export function segmentRecords(
  events: readonly SegmentEvent[],
  made: ReadonlyArray<Exchange | undefined>,
  backoffScale: number,
  early: ReadonlySet<number> = new Set(),
): { records: AttemptRecord[]; made: MadeAttempt[] } {
  const records: AttemptRecord[] = [];
  const done: MadeAttempt[] = [];
  events.forEach((e, i) => {
    if (early.has(i)) return;
    const x = made[i];
    if (!x) {
      records.push({ eventId: e.id, eventType: e.type, occurredAt: e.occurred_at, ...NONE, attempt: 1, status: 'pending', nextAttemptAt: new Date(), body: e.body });
      return;
    }
    const r = madeRecords(e, x, backoffScale);
    records.push(...r.records);
    done.push(r.made);
  });
  return { records, made: done };
}

/**
 * A segment's failed attempts recorded before the segment ends, so that their retries are due on time
 * whatever its other attempts take: the failures that schedule a retry, EARLY_RECORD_MS after the first of
 * them (one commit for those that fail meanwhile), while the segment is still sending; `write` records
 * them (recordSegmentEarly, only while the segment's lease is this process's) and answers whether it did.
 * A segment that ends first records them itself. `end()` answers the indexes recorded early, which the
 * segment's record then leaves out (a failed early record leaves them to it).
 */
export class EarlyFailures {
  private readonly waiting = new Map<number, ReturnType<typeof madeRecords>>();
  private readonly recorded = new Set<number>();
  private timer?: NodeJS.Timeout;
  private recording: Promise<void> = Promise.resolve();
  private ended = false;

  constructor(
    private readonly events: readonly SegmentEvent[],
    private readonly backoffScale: number,
    private readonly write: (records: AttemptRecord[], made: MadeAttempt[]) => Promise<boolean>,
    private readonly delayMs = EARLY_RECORD_MS,
  ) {}

  /** The attempt of `events[i]` ended without a 2xx. */
  failed(i: number, x: Exchange): void {
    if (this.ended) return;
    const made = madeRecords(this.events[i], x, this.backoffScale);
    if (!made.made.outcome.nextAttemptAt) return;
    this.waiting.set(i, made);
    this.timer ??= setTimeout(() => this.flush(), this.delayMs);
  }

  private flush(): void {
    this.timer = undefined;
    const batch = [...this.waiting];
    this.waiting.clear();
    this.recording = this.recording.then(async () => {
      if (this.ended) return;
      const each = batch.map(([, made]) => made);
      try {
        if (await this.write(each.flatMap((r) => r.records), each.map((r) => r.made))) for (const [i] of batch) this.recorded.add(i);
      } catch {
        // Left to the segment's record.
      }
    });
  }

  /** The segment's sends have ended: nothing more is recorded early. Answers the indexes that were. */
  async end(): Promise<ReadonlySet<number>> {
    this.ended = true;
    clearTimeout(this.timer);
    await this.recording;
    return this.recorded;
  }
}
