import type { EntityManager } from 'typeorm';
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
   * One page of `select` (a query over these filters, without ORDER BY or LIMIT) in `orderBy` order
   * (code-chosen columns), and the total number of its rows: what every list endpoint returns.
   */
  async pageOf<T>(
    m: EntityManager,
    select: Sql,
    orderBy: string,
    page: PageQuery,
    options: { prepare?: boolean; countFrom?: Sql } = {},
  ): Promise<{ rows: T[]; count: number }> {
    // Hot lists prepare their two statements (planning a join can cost more than running it); only
    // for selects with explicit columns (see `prepared`). `countFrom` counts the same rows with a
    // cheaper query (without the joins that only the page needs), over the same filters.
    const how = options.prepare ? PREPARED : undefined;
    const [{ count }] = await query(m, sql`SELECT count(*)::int AS count FROM (${options.countFrom ?? select}) AS counted`, how);
    const rows: T[] = await query(m, sql`${select} ORDER BY ${raw(orderBy)} ${limit(page)}`, how);
    return { rows, count };
  }
}

/** LIMIT/OFFSET of a page, as parameters. */
export const limit = (page: PageQuery): Sql => sql`LIMIT ${page.limit} OFFSET ${page.offset}`;
