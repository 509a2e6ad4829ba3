import { Injectable, Logger } from '@nestjs/common';
import { ClsService } from 'nestjs-cls';
import { Settings } from '../config/settings';
import { UnitOfWork } from '../database/unit-of-work';
import { ACROSS_TENANTS, BackgroundJob } from '../common/background-job';
import { pruneEvents } from './events.sql';

/** Recorded as the user of the job's units of work. */
const RETENTION_JOB_USER = 'system:event-retention';
const BATCH = 10_000;
const BATCHES_PER_RUN = 100;
const INTERVAL_MS = 3_600_000;

/**
 * Deletes events older than EVENT_RETENTION_DAYS, hourly, in batches (each a short transaction of its
 * own), across tenants (prune_events, SECURITY DEFINER). It records per tenant the newest position it
 * deleted, so a cursor that has missed a deleted event answers 410 cursor_expired. Several service
 * processes may run it at once (they delete disjoint or already-deleted rows).
 */
@Injectable()
export class EventRetentionJob extends BackgroundJob {
  private readonly logger = new Logger(EventRetentionJob.name);

  constructor(
    private readonly settings: Settings,
    uow: UnitOfWork,
    cls: ClsService,
  ) {
    super(cls, uow, RETENTION_JOB_USER);
  }

  protected intervalMs(): number {
    return INTERVAL_MS;
  }

  /** Deletes what is past retention; returns how many events were deleted. */
  protected async work(): Promise<number> {
    const cutoff = new Date(Date.now() - this.settings.EVENT_RETENTION_DAYS * 86_400_000);
    let deleted = 0;
    try {
      for (let i = 0; i < BATCHES_PER_RUN; i++) {
        const n = await this.inUnitOfWork(ACROSS_TENANTS, (m) => pruneEvents(m, cutoff, BATCH));
        deleted += n;
        if (n < BATCH) break;
      }
    } catch (err) {
      this.logger.warn({ err }, 'event retention run failed; the next run retries');
    }
    return deleted;
  }
}
