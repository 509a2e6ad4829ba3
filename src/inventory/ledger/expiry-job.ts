import { Injectable, Logger } from '@nestjs/common';
import { ClsService } from 'nestjs-cls';
import { Settings } from '../../config/settings';
import { UnitOfWork } from '../../database/unit-of-work';
import { ACROSS_TENANTS, BackgroundJob } from '../../common/background-job';
import { LedgerService } from './ledger.service';
import { tenantsWithExpiredReservations } from './reads.sql';

/** Recorded as updated_by on reservations the job releases. */
export const EXPIRY_JOB_USER = 'system:reservation-expiry';
const TENANTS_PER_RUN = 100;

/**
 * Releases expired reservations in the background, every RESERVATION_EXPIRY_INTERVAL_SECONDS, so
 * requests never do it: a GET takes no row locks. Until a run gets to a reservation, reads and postings
 * already treat it as released (`lapsed.sql.ts`). Each tenant is swept in its own unit of work; several
 * service processes may run the job at once (rows are taken with SKIP LOCKED).
 */
@Injectable()
export class ExpiryJob extends BackgroundJob {
  private readonly logger = new Logger(ExpiryJob.name);

  constructor(
    private readonly settings: Settings,
    uow: UnitOfWork,
    cls: ClsService,
    private readonly ledger: LedgerService,
  ) {
    super(cls, uow, EXPIRY_JOB_USER);
  }

  protected intervalMs(): number {
    return this.settings.RESERVATION_EXPIRY_INTERVAL_SECONDS * 1000;
  }

  /** Releases what has expired; returns how many reservations were released. */
  protected async work(): Promise<number> {
    let released = 0;
    try {
      const tenants: Array<{ tenant_id: string }> = await this.inUnitOfWork(ACROSS_TENANTS, (m) => tenantsWithExpiredReservations(m, TENANTS_PER_RUN));
      for (const { tenant_id } of tenants) {
        try {
          released += await this.inUnitOfWork(tenant_id, () => this.ledger.sweepExpired());
        } catch (err) {
          // One tenant's failure (counters that drifted: `npm run ledger:verify` names them) stops no one else.
          this.logger.error({ err, tenantId: tenant_id }, 'expired reservations of a tenant could not be released');
        }
      }
    } catch (err) {
      this.logger.warn({ err }, 'reservation expiry run failed; the next run retries');
    }
    return released;
  }
}
