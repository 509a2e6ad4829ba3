import { Injectable } from '@nestjs/common';
import { AppError, invalidField } from '../common/errors';
import { UnitOfWork } from '../database/unit-of-work';
import { EventFeedQuery, FEED_SCAN, MAX_TYPES, TYPE_PATTERN } from './events.dto';
import { EventRow, FeedPosition as Position, prunedTo, readFeed } from './events.sql';

const CURSOR_PREFIX = 'ev1_';
const BIGINT_MAX = 2n ** 63n - 1n;

/** A position as an opaque cursor (`ev1_` + base64url of `txid.seq`). */
export const encodeCursor = (p: Position) => CURSOR_PREFIX + Buffer.from(`${p.txid}.${p.seq}`).toString('base64url');

/** The position of a cursor, or undefined when `text` is not one of ours. */
export function decodeCursor(text: string): Position | undefined {
  if (!text.startsWith(CURSOR_PREFIX)) return undefined;
  const m = /^(\d{1,19})\.(\d{1,19})$/.exec(Buffer.from(text.slice(CURSOR_PREFIX.length), 'base64url').toString());
  if (!m || BigInt(m[1]) > BIGINT_MAX || BigInt(m[2]) > BIGINT_MAX) return undefined;
  return { txid: m[1], seq: m[2] };
}

/** The event feed (CONTRACT §9): pages in the feed's order behind the horizon of running transactions (events.sql.ts). */
@Injectable()
export class EventsService {
  constructor(private readonly uow: UnitOfWork) {}

  async feed(q: EventFeedQuery) {
    const after = q.after === undefined ? undefined : decodeCursor(q.after);
    if (q.after !== undefined && !after) throw invalidField('after', 'is not a cursor of the event feed (use a nextCursor it returned)');
    const filter = typeFilter(q.types);
    // Unfiltered, every event read is on the page; filtered, a page reads at most FEED_SCAN events.
    const read = filter.exact.length || filter.prefixes.length ? Math.max(FEED_SCAN, q.limit) : q.limit;
    // Without a cursor, the feed starts after what the retention job has deleted (readFeed).
    const from = after ? { ...after, cursor: true } : { ...(await prunedTo(this.uow.manager, this.uow.tenantId)), cursor: false };
    const page = await readFeed(this.uow.manager, this.uow.tenantId, from, filter, { limit: q.limit, read });
    if (page.expired) {
      throw new AppError(410, 'cursor_expired', 'Events after this cursor were deleted (older than the retention of events); start again without after');
    }
    // The position the read covered, not only its last event: the next poll goes on after what this one
    // passed over (events of other types, the deleted start of the feed).
    return { data: page.events.map(eventView), nextCursor: encodeCursor(page.next), limit: q.limit };
  }
}

/** An event of the feed as GET /v1/events answers it (and webhooks deliver it). */
export const eventView = (e: EventRow) => ({
  id: e.id,
  type: e.type,
  occurredAt: e.occurred_at,
  action: e.action,
  subject: { type: e.subject_type, id: e.subject_id },
  data: e.data,
});

/** `types` as exact types and prefixes (`stock.*` → `stock.`); 400 naming `types` when malformed or too many. */
function typeFilter(types: string | undefined): TypeFilter {
  return typeFilterOf(types ? types.split(',') : []);
}

export interface TypeFilter {
  exact: string[];
  prefixes: string[];
}

/** A list of types (the feed's `types`, a webhook's `types`) as exact types and prefixes; 400 naming `types` when malformed or too many. */
export function typeFilterOf(types: readonly string[]): TypeFilter {
  const list = [...new Set(types)];
  if (list.length > MAX_TYPES) throw invalidField('types', `must list at most ${MAX_TYPES} types`);
  const bad = list.find((t) => !TYPE_PATTERN.test(t));
  if (bad !== undefined) throw invalidField('types', `${JSON.stringify(bad)} is neither an event type (stock.changed) nor a prefix (stock.*)`);
  return { exact: list.filter((t) => !t.endsWith('.*')), prefixes: list.filter((t) => t.endsWith('.*')).map((t) => t.slice(0, -1)) };
}
