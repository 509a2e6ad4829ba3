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

  /**
   * Runs `work` in one transaction for `tenantId` (default: the current principal's). Opening costs one
   * round trip (BEGIN and the role/tenant settings in one simple query) and closing one (COMMIT or
   * ROLLBACK); the connection goes back to the pool either way.
   */
  async run<T>(work: (manager: EntityManager) => Promise<T>, tenantId?: string): Promise<T> {
    if (!this.cls.isActive()) return this.cls.run(() => this.run(work, tenantId));
    if (this.cls.get<EntityManager | undefined>('manager')) throw new Error('A unit of work is already active: use its manager');
    const tenant = tenantId ?? this.tenantId;
    // Inlined into the opening statement (a simple query takes no parameters): only a UUID may go there.
    if (!UUID.test(tenant)) throw new Error('A unit of work needs a tenant UUID');
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(work, tenant);
      } catch (err) {
        const code = AppError.sqlState(err);
        if (!code || !RETRYABLE_SQLSTATES.has(code) || attempt >= MAX_ATTEMPTS) throw err;
        this.logger.warn(`unit of work retried after SQLSTATE ${code} (attempt ${attempt})`);
        await new Promise((r) => setTimeout(r, 5 * attempt + Math.random() * 20 * attempt));
      }
    }
  }

  private async attempt<T>(work: (manager: EntityManager) => Promise<T>, tenant: string): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    let opened: Promise<unknown> | undefined;
    try {
      // The pool's connections are pipelined (data-source.ts): the opening statement is sent and the
      // work's first statement goes right behind it, without waiting for its answer. Safe: should the
      // opening fail after BEGIN, the transaction is aborted and every statement behind it fails (25P02)
      // until our ROLLBACK; nothing can run outside the tenant's role and setting.
      const client = (await runner.connect()) as PgClient;
      opened = client.query(`BEGIN; SELECT set_config('role', '${APP_ROLE}', true), set_config('app.tenant_id', '${tenant}', true)`);
      opened.catch(() => undefined);
      // TypeORM's own features that need a transaction (pessimistic locks) look at this flag.
      (runner as { isTransactionActive: boolean }).isTransactionActive = true;
      this.cls.set('manager', runner.manager);
      this.cls.set('failure', undefined);
      const result = await work(runner.manager);
      await opened;
      // A step that may have written part of its changes failed: whatever the caller did with its
      // error, the unit of work must not commit (all or nothing, CONTRACT §5 invariant 5).
      const failure = this.cls.get<unknown>('failure');
      if (failure) throw failure;
      opened = undefined;
      const commit = (await client.query('COMMIT')) as { command?: string };
      // COMMIT of a transaction that an error aborted answers ROLLBACK: never report that as success.
      if (commit.command !== 'COMMIT') throw new Error(`COMMIT answered ${commit.command}`);
      return result;
    } catch (err) {
      // The opening statement's own error explains everything that failed behind it.
      const openError = opened ? await opened.then(() => undefined, (e: unknown) => e) : undefined;
      // A connection that broke needs no ROLLBACK (and cannot take one): the server ends the transaction.
      if (opened) await runner.query('ROLLBACK').catch(() => undefined);
      throw openError ?? err;
    } finally {
      this.cls.set('manager', undefined);
      this.cls.set('failure', undefined);
      await runner.release().catch(() => undefined);
    }
  }
}

/** The node-postgres client under a TypeORM query runner (its `connect()` resolves to it). */
interface PgClient {
  query(text: string): Promise<unknown>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
