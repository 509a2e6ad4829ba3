import { OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { ClsService } from 'nestjs-cls';
import type { EntityManager } from 'typeorm';
import type { UnitOfWork } from '../database/unit-of-work';
import { Principal } from '../tenancy/request-context';

/**
 * The tenant of a job's units of work that only call functions working across tenants (SECURITY DEFINER,
 * which ignore it): the nil UUID, which no tenant has.
 */
export const ACROSS_TENANTS = '00000000-0000-0000-0000-000000000000';

/**
 * A job the service runs in the background, every `intervalMs` (0: not in this process), and on demand
 * (`runOnce`, e.g. from a test): never two runs at once in a process, stopped with the application (a
 * run in flight is awaited). Its units of work run in a request context of their own, as the job's user.
 */
export abstract class BackgroundJob implements OnApplicationBootstrap, OnModuleDestroy {
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;

  protected constructor(
    private readonly cls: ClsService,
    private readonly uow: UnitOfWork,
    /** Recorded as the user of the job's units of work. */
    private readonly user: string,
  ) {}

  /** Milliseconds between runs; 0 runs it only on demand. */
  protected abstract intervalMs(): number;

  /** One run; returns how many records it handled. Failures are the run's to log (the next run retries). */
  protected abstract work(): Promise<number>;

  onApplicationBootstrap(): void {
    const ms = this.intervalMs();
    if (ms > 0) this.timer = setInterval(() => void this.runOnce(), ms).unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** One run (never two at once in a process). */
  runOnce(): Promise<number> {
    this.running ??= this.work().finally(() => (this.running = undefined));
    return this.running;
  }

  /**
   * `work` as a unit of work of `tenantId` (ACROSS_TENANTS for the cross-tenant look-ups), in a request
   * context of its own whose principal is this job's user.
   */
  protected inUnitOfWork<T>(tenantId: string, work: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.cls.run(() => {
      this.cls.set<Principal>('principal', { tenantId, userId: this.user, permissions: new Set() });
      return this.uow.run(work, tenantId);
    });
  }
}
