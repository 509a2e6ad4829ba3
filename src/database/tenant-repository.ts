import { EntityMetadata, FindManyOptions, FindOptionsWhere, ObjectLiteral, Repository, SelectQueryBuilder } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { assertVersion, notFound } from '../common/errors';

/** An entity's fields without its tenant: what a module gives; the repository adds the tenant. */
export type Untenanted<T> = Omit<T, 'tenantId'>;

/** A condition on an entity without its tenant (the repository adds it). */
export type TenantWhere<T> = FindOptionsWhere<Untenanted<T>>;

/**
 * A TypeORM repository bound to one tenant: every find, count, insert, update and delete carries
 * `tenant_id` by itself, so a module cannot forget it, and a query builder starts with the tenant's
 * condition, which its `where` cannot replace (it adds to it). Row-level security stays the second wall:
 * the unit of work's connection sees only its tenant's rows whatever the query says.
 * Get one from the unit of work: `uow.repository(Facility)`.
 */
export class TenantRepository<T extends ObjectLiteral & { tenantId: string }> {
  constructor(
    private readonly repo: Repository<T>,
    readonly tenantId: string,
    /** The acting user, stamped as `updatedBy` by `touch`. */
    private readonly userId?: string,
  ) {}

  /** The entity's mapping (columns, relations), e.g. for `recordOf`. */
  get metadata(): EntityMetadata {
    return this.repo.metadata;
  }

  private scoped(where?: TenantWhere<T> | TenantWhere<T>[]): FindOptionsWhere<T> | FindOptionsWhere<T>[] {
    const tenant = { tenantId: this.tenantId } as FindOptionsWhere<T>;
    if (Array.isArray(where)) return where.map((w) => ({ ...w, ...tenant }) as FindOptionsWhere<T>);
    return { ...(where ?? {}), ...tenant } as FindOptionsWhere<T>;
  }

  find(options: Omit<FindManyOptions<T>, 'where'> & { where?: TenantWhere<T> | TenantWhere<T>[] } = {}): Promise<T[]> {
    return this.repo.find({ ...options, where: this.scoped(options.where) } as FindManyOptions<T>);
  }

  findBy(where: TenantWhere<T> | TenantWhere<T>[]): Promise<T[]> {
    return this.repo.findBy(this.scoped(where));
  }

  /** One row or null; `lock: 'update'` locks it for the rest of the unit of work. */
  findOne(where: TenantWhere<T>, options: { lock?: 'update' | 'share' } = {}): Promise<T | null> {
    const lock = options.lock === 'update' ? { mode: 'pessimistic_write' as const } : options.lock === 'share' ? { mode: 'pessimistic_read' as const } : undefined;
    return this.repo.findOne({ where: this.scoped(where), ...(lock && { lock }) } as FindManyOptions<T>);
  }

  count(where?: TenantWhere<T> | TenantWhere<T>[]): Promise<number> {
    return this.repo.countBy(this.scoped(where));
  }

  /** Inserts rows of this tenant (their `tenantId` is set here). */
  async insert(values: Untenanted<QueryDeepPartialEntity<T>> | Array<Untenanted<QueryDeepPartialEntity<T>>>): Promise<void> {
    const rows = (Array.isArray(values) ? values : [values]).map((v) => ({ ...v, tenantId: this.tenantId }) as unknown as QueryDeepPartialEntity<T>);
    if (rows.length) await this.repo.insert(rows);
  }

  /** Updates this tenant's rows matching `where`; returns how many. */
  async update(where: TenantWhere<T>, patch: Untenanted<QueryDeepPartialEntity<T>>): Promise<number> {
    const result = await this.repo.update(this.scoped(where) as FindOptionsWhere<T>, patch as QueryDeepPartialEntity<T>);
    return result.affected ?? 0;
  }

  /** Deletes this tenant's rows matching `where`; returns how many. */
  async delete(where: TenantWhere<T>): Promise<number> {
    const result = await this.repo.delete(this.scoped(where) as FindOptionsWhere<T>);
    return result.affected ?? 0;
  }

  /**
   * The one way a versioned row (a document or master data: an entity with a version column) is taken for
   * a change: the row with `id`, locked for the rest of the unit of work (so concurrent changes of it
   * queue), or 404 naming `what`; then If-Match: `ifMatch`, when given, must be its version (412).
   */
  async lockVersion(id: string, ifMatch: number | undefined, what: string): Promise<T> {
    const row = await this.findOne({ id } as unknown as TenantWhere<T>, { lock: 'update' });
    if (!row) throw notFound(what);
    assertVersion((row as { version?: number }).version ?? 0, ifMatch);
    return row;
  }

  /**
   * The one way a versioned row changes: applies `patch` (may be empty) to the row with `id` as one UPDATE
   * that also sets version + 1 and updated_at = now() (the entity's version and update-date columns) and
   * `updatedBy` = the acting user.
   */
  async touch(id: string, patch: Untenanted<QueryDeepPartialEntity<T>> = {} as Untenanted<QueryDeepPartialEntity<T>>): Promise<void> {
    if (!this.userId) throw new Error('touch needs the acting user: get the repository from the unit of work');
    await this.update({ id } as unknown as TenantWhere<T>, { ...patch, updatedBy: this.userId } as Untenanted<QueryDeepPartialEntity<T>>);
  }

  /**
   * A query builder over this tenant's rows, with named parameters only. Its `where` adds to the tenant's
   * condition instead of replacing it (as `andWhere` does), so no later call can widen it to other tenants.
   */
  createQueryBuilder(alias: string): SelectQueryBuilder<T> {
    const qb = this.repo.createQueryBuilder(alias).where(`${alias}.tenantId = :__tenantId`, { __tenantId: this.tenantId });
    qb.where = qb.andWhere.bind(qb) as typeof qb.where;
    return qb;
  }
}
