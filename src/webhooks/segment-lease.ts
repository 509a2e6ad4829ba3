import type { EntityManager } from 'typeorm';
import { typeFilterOf } from '../events/events.service';
import { FeedPosition, isSegmentEvent, LeasedSegment, leaseExpiredSegment, leaseNewSegment, lockForLease, readSegmentFeed, recordedEvents, SegmentEvent } from './webhooks.sql';

/*
 * Leasing a segment of a webhook's feed (WebhookDispatcher, step 1): the events a process is to send as first
 * attempts, with the bounds a segment keeps.
 */

/** Events read from the feed per statement, reads per lease, and a segment's most events and body bytes (at least one event). */
const FEED_READ = 500;
const FEED_READS = 10;
const SEGMENT_MAX = 200;
const SEGMENT_MAX_BYTES = 2 * 1024 * 1024;
/**
 * How long a lease (a claimed retry, a segment of the feed) is this process's (seconds): longer than an
 * attempt can take (20 s: the target's DNS check, 5 s, and the 15 s answer timeout). A process that dies
 * mid-attempt leaves it to be made again once this has passed.
 */
export const LEASE_SECONDS = 60;
/**
 * A segment's sends start at most this long after its lease was taken; the rest are recorded pending (made
 * by the retry path). Each attempt ends long before the lease does; a failure is recorded, with its retry
 * (due 5 s after it), about EARLY_RECORD_MS after it, not when the segment's slowest answer comes.
 */
const SEGMENT_SENDING_MS = 5_000;

/** A leased segment with what sending it takes: the webhook's target and secret, and the segment's events of the webhook's types. */
export interface SegmentToSend {
  segment: LeasedSegment;
  url: string;
  secretCiphertext: string;
  events: SegmentEvent[];
  /** When its sends must have started (Date.now() milliseconds). */
  sendBy: number;
}

const isAfter = (e: FeedPosition, p: FeedPosition) => BigInt(e.txid) > BigInt(p.txid) || (e.txid === p.txid && BigInt(e.seq) > BigInt(p.seq));

/**
 * Leases a segment of the webhook's feed: one a dead process left, else the next events of its types
 * (moving its position past events of other types on the way). None: nothing to send, the webhook is off,
 * or another process is leasing.
 */
export async function leaseSegment(m: EntityManager, tenantId: string, webhookId: string, takenAt: number): Promise<SegmentToSend | undefined> {
  const [hook] = await lockForLease(m, tenantId, webhookId);
  if (!hook) return undefined;
  const filter = typeFilterOf(hook.types);
  const toSend = (segment: LeasedSegment, events: SegmentEvent[]) => ({ segment, url: hook.url, secretCiphertext: hook.secret_ciphertext, events, sendBy: takenAt + SEGMENT_SENDING_MS });
  if (hook.expired) {
    const segment = await leaseExpiredSegment(m, tenantId, webhookId, LEASE_SECONDS);
    if (segment) {
      const rows = await readSegmentFeed(m, tenantId, segment.after, filter, FEED_READ);
      const events = rows.filter((e): e is SegmentEvent => isSegmentEvent(e) && !isAfter(e, segment.last));
      // Not those its process recorded early (EarlyFailures): their retries are rows of their own.
      const early = await recordedEvents(m, tenantId, webhookId, events.map((e) => e.id));
      return toSend(segment, events.filter((e) => !early.has(e.id)));
    }
  }
  let after: FeedPosition = { txid: hook.feed_txid, seq: hook.feed_seq };
  for (let read = 0; read < FEED_READS; read++) {
    const rows = await readSegmentFeed(m, tenantId, after, filter, FEED_READ);
    if (!rows.length) return undefined;
    const events: SegmentEvent[] = [];
    let bytes = 0;
    let last: FeedPosition = rows[rows.length - 1];
    for (const e of rows) {
      if (!isSegmentEvent(e)) continue;
      if (events.length && bytes + e.body.length > SEGMENT_MAX_BYTES) {
        last = events[events.length - 1];
        break;
      }
      events.push(e);
      bytes += e.body.length;
      if (events.length === SEGMENT_MAX) {
        last = e;
        break;
      }
    }
    const position = { txid: last.txid, seq: last.seq };
    const segment = await leaseNewSegment(m, tenantId, webhookId, { after, last: position }, events.length > 0, LEASE_SECONDS);
    if (segment) return toSend(segment, events);
    if (rows.length < FEED_READ) return undefined;
    after = position;
  }
  return undefined;
}
