import { Injectable } from '@nestjs/common';
import { AppError, invalidField } from '../common/errors';
import { UnitOfWork } from '../database/unit-of-work';
import { EventFeedQuery, MAX_TYPES, TYPE_PATTERN } from './events.dto';
import { EventRow, readFeed } from './events.sql';

/** A feed position: the writing transaction's id and the event's sequence number. */
interface Position {
  txid: string;
  seq: string;
}

const START: Position = { txid: '0', seq: '0' };
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
    const after = q.after === undefined ? START : decodeCursor(q.after);
    if (!after) throw invalidField('after', 'is not a cursor of the event feed (use a nextCursor it returned)');
    const rows = await readFeed(this.uow.manager, this.uow.tenantId, { ...after, fromCursor: q.after !== undefined }, typeFilter(q.types), q.limit);
    if (rows[0]?.expired) {
      throw new AppError(410, 'cursor_expired', 'Events after this cursor were deleted (older than the retention of events); start again without after');
    }
    const events = rows.filter((r): r is EventRow & { id: string } => r.id !== null);
    const last = events[events.length - 1];
    return {
      data: events.map(eventView),
      nextCursor: encodeCursor(last ? { txid: last.txid!, seq: last.seq! } : after),
      limit: q.limit,
    };
  }
}

/** An event of the feed as GET /v1/events answers it (and webhooks deliver it). */
export const eventView = (e: EventRow & { id: string }) => ({
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
