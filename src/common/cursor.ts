import { validateSync } from 'class-validator';
import { invalidField } from './errors';
import type { PageQuery } from './pagination';

/**
 * Cursor paging (CONTRACT §1): a list's `nextCursor` names the last row of a page by the values of the
 * list's sort keys; `after=<cursor>` reads the rows that follow it in the same order (keyset paging: the
 * page query starts at that position through the list's index, so its cost does not grow with depth, and
 * rows inserted or deleted meanwhile cannot shift the rows that existed when paging began).
 *
 * The cursor is base64url of JSON `{l, k, f}`: the list's name (a cursor of another list is refused), the
 * key values as PostgreSQL prints them (`::text`, so a timestamp keeps its microseconds), and the list's
 * filters, so `after` alone pages with the same filters (filters sent with it must equal them).
 */

/** One sort key of a list: a column expression (trusted, code-chosen), its direction, its type. */
export interface SortKey {
  /**
   * The key as SQL: an expression of the page query (`t.posted_at`) for a hand-written list; a property
   * path of the query builder's main alias (`f.createdAt`) for a repository list.
   */
  expr: string;
  /** The name of the key's column in the page's rows (hand-written lists; default: expr after the alias). */
  column?: string;
  desc?: boolean;
  /** The key may be NULL, sorted first or last (PostgreSQL's default: last ascending, first descending). */
  nulls?: 'first' | 'last';
  /** How a cursor's value is compared (cast) and checked. */
  type: 'timestamptz' | 'uuid' | 'text';
}

/** A list's documented order as sort keys, the last one unique; `list` names the list in its cursors. */
export class Keyset {
  constructor(
    readonly list: string,
    readonly keys: readonly SortKey[],
  ) {}

  /** ORDER BY items, as `expr`, direction and NULLS placement. */
  get orderBy(): Array<{ expr: string; dir: 'ASC' | 'DESC'; nulls?: 'NULLS FIRST' | 'NULLS LAST' }> {
    return this.keys.map((k) => ({ expr: k.expr, dir: k.desc ? 'DESC' : 'ASC', nulls: k.nulls && (k.nulls === 'first' ? 'NULLS FIRST' : 'NULLS LAST') }));
  }

  /** True when a row comparison `(a, b) > (x, y)` says "after": no nullable key, one direction. */
  get rowComparable(): boolean {
    return this.keys.every((k) => !k.nulls && !!k.desc === !!this.keys[0].desc);
  }
}

/** A decoded cursor: the key values of the row the next page starts after. */
export type Position = Array<string | null>;

/** The fields of a list query that are not filters. */
const NOT_FILTERS = new Set(['limit', 'offset', 'after']);

const filtersOf = (query: PageQuery): Record<string, unknown> =>
  Object.fromEntries(Object.entries(query).filter(([k, v]) => !NOT_FILTERS.has(k) && v !== undefined));

const refuse = (why: string) => invalidField('after', why);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// PostgreSQL's text of a timestamptz in the service's sessions (ISO DateStyle): 2026-11-26 13:50:16.123456+00
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?([+-]\d{2})(?::(\d{2}))?$/;

function validValue(type: SortKey['type'], value: string): boolean {
  if (value.length > 500) return false;
  if (type === 'uuid') return UUID.test(value);
  if (type === 'timestamptz') {
    const m = TIMESTAMP.exec(value);
    if (!m) return false;
    const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number);
    const date = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
    return y >= 1 && date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d && h < 24 && mi < 60 && s < 60
      && Math.abs(Number(m[8])) < 16 && Number(m[9] ?? 0) < 60;
  }
  return true;
}

/**
 * The position `query.after` names in `keyset`'s list (undefined without `after`), after taking the
 * cursor's filters into `query` (call it before reading the query's filters). 400 `validation_failed`
 * naming `after`: with `offset` > 0, not a cursor, a cursor of another list, or filters other than the
 * cursor's.
 */
export function cursorOf(keyset: Keyset, query: PageQuery): Position | undefined {
  if (query.after === undefined) return undefined;
  if (query.offset > 0) throw refuse('cannot be combined with offset > 0');
  const cursor = decoded(query.after);
  if (!cursor) throw refuse('is not a cursor of this list');
  const { l, k, f } = cursor;
  if (
    l !== keyset.list ||
    !Array.isArray(k) ||
    k.length !== keyset.keys.length ||
    !k.every((v, i) => v === null ? !!keyset.keys[i].nulls : typeof v === 'string' && validValue(keyset.keys[i].type, v)) ||
    typeof f !== 'object' || f === null || Array.isArray(f)
  )
    throw refuse('is not a cursor of this list');
  // The cursor's filters apply; a filter sent along must be the same.
  const given = filtersOf(query);
  const filters = f as Record<string, unknown>;
  for (const name of new Set([...Object.keys(given), ...Object.keys(filters)])) {
    if (name in given && JSON.stringify(given[name]) !== JSON.stringify(filters[name]))
      throw refuse(`was issued for other filters (${name}): send the same filters, or none`);
  }
  Object.assign(query, filters);
  if (validateSync(query, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true }).length) throw refuse('is not a cursor of this list');
  return k as Position;
}

/**
 * The list a cursor names, unchecked (cursorOf checks it when the page is read), or undefined: for a route
 * that answers more than one list, so that `after` alone pages on the list the cursor came from.
 */
export function cursorList(after: string | undefined): string | undefined {
  const list = after === undefined ? undefined : decoded(after)?.l;
  return typeof list === 'string' ? list : undefined;
}

/** A cursor's JSON object `{l, k, f}`, its members unchecked; undefined when it is not one. */
function decoded(after: string): { l?: unknown; k?: unknown; f?: unknown } | undefined {
  try {
    const cursor: unknown = JSON.parse(Buffer.from(after, 'base64url').toString('utf8'));
    return typeof cursor === 'object' && cursor !== null ? cursor : undefined;
  } catch {
    return undefined;
  }
}

/** The cursor of the row with key values `position` in `keyset`'s list read with `query`'s filters. */
export function cursorAt(keyset: Keyset, query: PageQuery, position: Position): string {
  return Buffer.from(JSON.stringify({ l: keyset.list, k: position, f: filtersOf(query) }), 'utf8').toString('base64url');
}

/** How `keysetCondition` writes its parts: as `sql` fragments, or as query-builder text with named parameters. */
export interface ConditionWriter<F> {
  /** Key i compared with the position's value: `key op value`. */
  compare(i: number, op: '<' | '>' | '=' | '<=' | '>='): F;
  /** `(keys…) op (values…)` over all keys. */
  rows(op: '<' | '>'): F;
  isNull(i: number, negated: boolean): F;
  and(parts: F[]): F;
  or(parts: F[]): F;
  never: F;
}

/**
 * The condition "comes after `at` in `keyset`'s order". Without nullable keys and in one direction it is a
 * row comparison, which a B-tree index in that order answers as a range (the first key's bound is repeated
 * as its own condition, so an index on that key alone serves too); otherwise the lexicographic expansion
 * with NULLs in their sort place.
 */
export function keysetCondition<F>(keyset: Keyset, at: Position, w: ConditionWriter<F>): F {
  if (keyset.rowComparable) {
    const desc = !!keyset.keys[0].desc;
    return w.and([w.compare(0, desc ? '<=' : '>='), w.rows(desc ? '<' : '>')]);
  }
  const equal = (i: number) => (at[i] === null ? w.isNull(i, false) : w.compare(i, '='));
  const after = (i: number): F => {
    const k = keyset.keys[i];
    const nullsFirst = k.nulls ? k.nulls === 'first' : !!k.desc;
    if (at[i] === null) return nullsFirst ? w.isNull(i, true) : w.never;
    const beyond = w.compare(i, k.desc ? '<' : '>');
    return k.nulls && !nullsFirst ? w.or([beyond, w.isNull(i, false)]) : beyond;
  };
  return w.or(keyset.keys.map((_, i) => w.and([...keyset.keys.slice(0, i).map((__, j) => equal(j)), after(i)])));
}

/**
 * The default order of lists (CONTRACT §1): newest first by the creation time, then id — of the rows
 * aliased `alias` (empty: unqualified columns, e.g. over a subquery's output).
 */
export const newestFirst = (list: string, alias: string, createdAt = 'createdAt') => {
  const of = (column: string) => (alias ? `${alias}.${column}` : column);
  return new Keyset(list, [
    { expr: of(createdAt), desc: true, type: 'timestamptz' },
    { expr: of('id'), desc: true, type: 'uuid' },
  ]);
};
