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
 * A sent segment's attempts as they are recorded (recordSegment), in its events' order: each made one (with
 * its retry, when one is scheduled: due the schedule's delay after the answer), and each event not sent
 * (`made[i]` undefined: after a 410, as the service stops, past the segment's sendBy, or when the delivery
 * thread failed) as a pending first attempt, due now. `made`: the attempts made, with their outcomes.
 */
export function segmentRecords(
  events: readonly SegmentEvent[],
  made: ReadonlyArray<Exchange | undefined>,
  backoffScale: number,
): { records: AttemptRecord[]; made: MadeAttempt[] } {
  const records: AttemptRecord[] = [];
  const done: MadeAttempt[] = [];
  const none = { responseStatus: null, responseBody: null, error: null, attemptedAt: null };
  events.forEach((e, i) => {
    const event = { eventId: e.id, eventType: e.type, occurredAt: e.occurred_at };
    const x = made[i];
    if (!x) {
      records.push({ ...event, ...none, attempt: 1, status: 'pending', nextAttemptAt: new Date(), body: e.body });
      return;
    }
    const o = outcomeOf(1, x.result, x.attemptedAt, backoffScale, x.answeredAt);
    records.push({ ...event, attempt: 1, status: o.status, responseStatus: o.responseStatus, responseBody: o.responseBody, error: o.error, attemptedAt: o.attemptedAt, nextAttemptAt: o.nextAttemptAt, body: null });
    done.push({ eventId: e.id, occurredAt: event.occurredAt, outcome: o, answeredAt: x.answeredAt });
    if (o.nextAttemptAt) records.push({ ...event, ...none, attempt: 2, status: 'pending', nextAttemptAt: o.nextAttemptAt, body: e.body });
  });
  return { records, made: done };
}
