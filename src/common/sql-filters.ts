import type { EntityManager } from 'typeorm';
import { prepared } from '../database/prepared';
import { likePattern, PageQuery } from './pagination';

/**
 * Builds the WHERE of a tenant list query: `tenant_id = $1` then `AND …` for each filter that is set,
 * with numbered parameters. `?` in a condition stands for the filter's parameter.
 */
export class SqlFilters {
  readonly params: unknown[];
  private readonly conditions: string[] = [];

  constructor(tenantId: string, private readonly alias = '') {
    this.params = [tenantId];
  }

  /** Adds `condition` (with `?` for the value) when `value` is set. */
  add(condition: string, value: unknown): this {
    if (value === undefined || value === null || value === '') return this;
    this.params.push(value);
    this.conditions.push(condition.replace(/\?/g, `$${this.params.length}`));
    return this;
  }

  /** Adds `condition` over several values: one `?` per value, in order. */
  addEach(condition: string, values: unknown[]): this {
    let i = 0;
    this.conditions.push(condition.replace(/\?/g, () => {
      this.params.push(values[i++]);
      return `$${this.params.length}`;
    }));
    return this;
  }

  /** Case-insensitive substring of any of `columns` (LIKE wildcards in `q` are literal). */
  search(columns: string[], q: string | undefined): this {
    return this.add(`(${columns.map((c) => `${c} ILIKE ?`).join(' OR ')})`, q && likePattern(q));
  }

  /** True when no filter was added: the WHERE is the tenant alone. */
  get unfiltered(): boolean {
    return this.conditions.length === 0;
  }

  get where(): string {
    const tenant = `${this.alias ? `${this.alias}.` : ''}tenant_id = $1`;
    return [tenant, ...this.conditions].join(' AND ');
  }

  /**
   * One page of `select` (a query over these filters, without ORDER BY or LIMIT) in `orderBy` order,
   * and the total number of its rows: what every list endpoint returns.
   */
  async pageOf<T>(
    m: EntityManager,
    select: string,
    orderBy: string,
    query: PageQuery,
    options: { prepare?: boolean; countFrom?: string } = {},
  ): Promise<{ rows: T[]; count: number }> {
    // Hot lists prepare their two statements (planning a join can cost more than running it); only
    // for selects with explicit columns (see `prepared`). `countFrom` counts the same rows with a
    // cheaper query (without the joins that only the page needs), over the same filters.
    const sql = (text: string) => (options.prepare ? prepared(text) : text);
    const [{ count }] = await m.query(sql(`SELECT count(*)::int AS count FROM (${options.countFrom ?? select}) AS counted`), this.params);
    const rows: T[] = await m.query(sql(`${select} ORDER BY ${orderBy} ${this.page(query)}`), this.params);
    return { rows, count };
  }

  /** LIMIT/OFFSET of the page as parameters; call after every filter is added. */
  page(query: PageQuery): string {
    this.params.push(query.limit, query.offset);
    return `LIMIT $${this.params.length - 1} OFFSET $${this.params.length}`;
  }
}
