import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { runMigrations } from './migrate';

const RETRY_MS = 2000;

/**
 * Connects the data source — at start, and until it succeeds when the database is not there yet. The
 * service starts either way: until the database answers, `/health` is 503 and every `/v1` request is
 * 503 (UnitOfWork), and it becomes ready by itself, migrating first when `migrate` is on.
 */
@Injectable()
export class DatabaseConnector implements OnApplicationShutdown {
  private readonly logger = new Logger('Database');
  private timer?: NodeJS.Timeout;
  private stopped = false;
  /** Connected and migrated: requests may use the database. */
  ready = false;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** One attempt: connect (and migrate); true when the database is ready. A failed migration throws. */
  async connect(migrate: boolean): Promise<boolean> {
    if (!this.dataSource.isInitialized) {
      try {
        await this.dataSource.initialize();
      } catch (err) {
        this.logger.warn({ err: { message: (err as Error)?.message } }, `database not reachable; retrying every ${RETRY_MS / 1000} s (every request answers 503 meanwhile)`);
        return false;
      }
    }
    if (migrate) await runMigrations(this.dataSource);
    this.ready = true;
    return true;
  }

  /** Keeps trying in the background until connected (and migrated). */
  retryInBackground(migrate: boolean): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.connect(migrate).then(
        (ready) => (ready ? this.logger.log('database connected; the service is ready') : this.retryInBackground(migrate)),
        (err: unknown) => {
          this.logger.error({ err }, 'migrations failed after the database appeared; retrying');
          this.retryInBackground(migrate);
        },
      );
    }, RETRY_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
