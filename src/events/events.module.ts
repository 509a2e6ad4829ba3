import { Module } from '@nestjs/common';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';
import { EventRetentionJob } from './retention-job';

/**
 * The event feed: `GET /v1/events` and the retention job. Events are written by the changes themselves
 * (the ledger's posting statements, UnitOfWorkInterceptor for resource records: docs/architecture.md).
 */
@Module({
  controllers: [EventsController],
  providers: [EventsService, EventRetentionJob],
})
export class EventsModule {}
