import type { EntityManager } from 'typeorm';
import { cursorAt, Keyset, keysetCondition, Position, SortKey } from '../common/cursor';
import { likePattern, PageQuery } from '../common/pagination';
import { join, PREPARED, query, raw, Sql, sql } from './sql';

/**
 * Builds the WHERE of a tenant list query: the tenant's condition, then `AND …` for each filter that is
 * set. Conditions are `sql` fragments, so their parameters are numbered by the tag:
 * `new SqlFilters(tenant, 'b').add((v) => sql\`b.item_id = ${v}\`, query.itemId)`.
 */
export class SqlFilters {
  private readonly conditions: Sql[];

  constructor(tenantId: string, alias = '') {
    this.conditions = [sql`${raw(alias ? `${alias}.` : '')}tenant_id = ${tenantId}`];
  }

  /** Adds the condition `condition(value)` when `value` is set (not undefined, null or ''). */
  add<V>(condition: (value: V) => Sql, value: V | undefined | null | ''): this {
    if (value === undefined || value === null || value === '') return this;
    this.conditions.push(condition(value as V));
    return this;
  }

  /** Adds a condition that always applies. */
  always(condition: Sql): this {
    this.conditions.push(condition);
    return this;
  }

  /** Case-insensitive substring of any of `columns` (code-chosen column names; LIKE wildcards in `q` are literal). */
  search(columns: string[], q: string | undefined): this {
    if (!q) return this;
    const pattern = likePattern(q);
    return this.always(sql`(${join(columns.map((c) => sql`${raw(c)} ILIKE ${pattern}`), ' OR ')})`);
  }

  /** True when no filter was added: the WHERE is the tenant alone. */
  get unfiltered(): boolean {
    return this.conditions.length === 1;
  }

  get where(): Sql {
    return join(this.conditions, ' AND ');
  }

  /**
   * One page of a list and the total number of its rows: what every list endpoint returns. `select(after)`
   * is the list's query over these filters without ORDER BY or LIMIT, with the condition `after` ANDed to
   * its WHERE (where the keys' expressions are in scope); the page is read in `keyset`'s order from the
   * position `at` (`cursorOf`; keyset paging) or from `page.offset`, and its last row gives `nextCursor`
   * when more rows follow (one row more is read to know).
   */
  async pageOf<T>(
    m: EntityManager,
    select: (after: Sql) => Sql,
    keyset: Keyset,
    page: PageQuery,
    at: Position | undefined,
    options: { prepare?: boolean; countFrom?: Sql; count?: () => Promise<number> } = {},
  ): Promise<{ rows: T[]; count: number; nextCursor: string | null }> {
    // Hot lists prepare their two statements (planning a join can cost more than running it); only
    // for selects with explicit columns (see `prepared`). `countFrom` counts the same rows with a
    // cheaper query (without the joins that only the page needs), over the same filters; `count` is a
    // cheaper way still. The count is of every row matching the filters, wherever the page starts.
    const how = options.prepare ? PREPARED : undefined;
    const count = options.count
      ? await options.count()
      : (await query<Array<{ count: number }>>(m, sql`SELECT count(*)::int AS count FROM (${options.countFrom ?? select(sql`TRUE`)}) AS counted`, how))[0].count;
    const rows: Array<T & { [POSITION]?: Position }> = await query(m, keysetPage(select(keysetAfter(keyset, at)), keyset, page), how);
    const nextCursor = nextCursorOf(rows, keyset, page);
    return { rows: stripPositions(rows, page.limit), count, nextCursor };
  }
}

/** The column of a page's rows holding the sort key values as text (for the cursor), removed from the rows. */
const POSITION = 'keyset_position';

const column = (k: SortKey) => k.column ?? k.expr.slice(k.expr.indexOf('.') + 1);

/**
 * The page statement of `select` (already holding the keyset condition): ordered by `keyset`, limit + 1
 * rows from `page.offset`, each with its sort key values as text (a timestamp keeps its microseconds).
 */
function keysetPage(select: Sql, keyset: Keyset, page: PageQuery): Sql {
  const orderBy = keyset.orderBy.map((o) => `${o.expr} ${o.dir}${o.nulls ? ` ${o.nulls}` : ''}`).join(', ');
  const position = keyset.keys.map((k) => `page."${column(k)}"::text`).join(', ');
  return sql`SELECT page.*, ARRAY[${raw(position)}] AS ${raw(POSITION)}
    FROM (${select} ORDER BY ${raw(orderBy)} LIMIT ${page.limit + 1} OFFSET ${page.offset}) AS page`;
}

/** The page's rows without the extra row and the position column. */
function stripPositions<T>(rows: Array<T & { [POSITION]?: Position }>, limit: number): T[] {
  const out = rows.length > limit ? rows.slice(0, limit) : rows;
  for (const row of out) delete row[POSITION];
  return out;
}

/** The cursor after the page's last row when the statement found one row more, else null. */
function nextCursorOf(rows: Array<{ [POSITION]?: Position }>, keyset: Keyset, page: PageQuery): string | null {
  if (rows.length <= page.limit) return null;
  return cursorAt(keyset, page, rows[page.limit - 1][POSITION]!);
}

/** The condition "comes after `at` in `keyset`'s order" as a fragment over the keys' expressions (TRUE without a position). */
function keysetAfter(keyset: Keyset, at: Position | undefined): Sql {
  if (!at) return sql`TRUE`;
  const key = (i: number) => raw(keyset.keys[i].expr);
  const value = (i: number) => sql`${at[i]}::${raw(keyset.keys[i].type)}`;
  return keysetCondition<Sql>(keyset, at, {
    compare: (i, op) => sql`${key(i)} ${raw(op)} ${value(i)}`,
    rows: (op) => sql`(${raw(keyset.keys.map((k) => k.expr).join(', '))}) ${raw(op)} (${join(keyset.keys.map((_, i) => value(i)))})`,
    isNull: (i, negated) => sql`${key(i)} IS ${raw(negated ? 'NOT NULL' : 'NULL')}`,
    and: (parts) => sql`(${join(parts, ' AND ')})`,
    or: (parts) => sql`(${join(parts, ' OR ')})`,
    never: sql`FALSE`,
  });
}
