import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { ClsService } from 'nestjs-cls';
import { DataSource, EntityManager } from 'typeorm';
import { AppError } from '../common/errors';
import { Principal } from '../tenancy/request-context';
import { APP_ROLE, RETRYABLE_SQLSTATES } from './constants';

const MAX_ATTEMPTS = 4;

/**
 * One database transaction per unit of work, bound to the tenant of the current principal.
 * The transaction switches to the RLS-bound role and sets `app.tenant_id` (both transaction-local),
 * so every query inside it sees only that tenant's rows, whatever the code forgets to filter.
 * Deadlocks and serialization failures retry the whole unit of work.
 */
@Injectable()
export class UnitOfWork {
  private readonly logger = new Logger(UnitOfWork.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly cls: ClsService,
  ) {}

  /** The current transaction's manager. Fails closed outside a unit of work. */
  get manager(): EntityManager {
    const manager = this.cls.isActive() ? this.cls.get<EntityManager | undefined>('manager') : undefined;
    if (!manager) throw new Error('No unit of work is active: refusing to touch tenant data outside one');
    return manager;
  }

  /** The current principal. Fails closed when there is none. */
  get principal(): Principal {
    const principal = this.cls.isActive() ? this.cls.get<Principal | undefined>('principal') : undefined;
    if (!principal) throw new Error('No tenant context: refusing to touch tenant data without one');
    return principal;
  }

  get tenantId(): string {
    return this.principal.tenantId;
  }

  get userId(): string {
    return this.principal.userId;
  }

  /**
   * Marks the current unit of work as failed with `err`: it rolls back and ends with that error even if
   * the caller catches it and carries on. For steps that write several statements and may fail between them.
   */
  fail(err: unknown): void {
    if (this.cls.isActive() && this.cls.get('manager') && !this.cls.get('failure')) this.cls.set('failure', err);
  }

  /** Runs `work` in one transaction for `tenantId` (default: the current principal's). */
  async run<T>(work: (manager: EntityManager) => Promise<T>, tenantId?: string): Promise<T> {
    if (!this.cls.isActive()) return this.cls.run(() => this.run(work, tenantId));
    if (this.cls.get<EntityManager | undefined>('manager')) throw new Error('A unit of work is already active: use its manager');
    const tenant = tenantId ?? this.tenantId;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.dataSource.transaction(async (manager) => {
          await manager.query(
            `SELECT set_config('role', $1, true), set_config('app.tenant_id', $2, true)`,
            [APP_ROLE, tenant],
          );
          this.cls.set('manager', manager);
          this.cls.set('failure', undefined);
          try {
            const result = await work(manager);
            // A step that may have written part of its changes failed: whatever the caller did with its
            // error, the unit of work must not commit (all or nothing, CONTRACT §5 invariant 5).
            const failure = this.cls.get<unknown>('failure');
            if (failure) throw failure;
            return result;
          } finally {
            this.cls.set('manager', undefined);
            this.cls.set('failure', undefined);
          }
        });
      } catch (err) {
        const code = AppError.sqlState(err);
        if (!code || !RETRYABLE_SQLSTATES.has(code) || attempt >= MAX_ATTEMPTS) throw err;
        this.logger.warn(`unit of work retried after SQLSTATE ${code} (attempt ${attempt})`);
        await new Promise((r) => setTimeout(r, 5 * attempt + Math.random() * 20 * attempt));
      }
    }
  }
}
