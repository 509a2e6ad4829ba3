import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Permissions } from '../auth/decorators';
import { FeedPage, Returns } from '../common/responses';
import { EventFeedQuery } from './events.dto';
import { EventResponse } from './events.responses';
import { EventsService } from './events.service';

@ApiTags('events')
@Returns(EventResponse)
@Controller('v1/events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @FeedPage()
  @Permissions('events:read')
  @ApiOperation({
    summary: 'The event feed: what changed, in commit order',
    description:
      'Events in the feed\'s order; a page never skips an event that commits later (it appears after the cursor). ' +
      '`nextCursor` is always a string: poll again with `after=<nextCursor>` (an empty page when nothing came). ' +
      'Events are kept EVENT_RETENTION_DAYS days (default 30); a cursor whose following events were deleted → 410 cursor_expired. ' +
      'Malformed `after` or `types`, more than 20 types, `limit` outside 1..500 → 400.',
  })
  feed(@Query() query: EventFeedQuery) {
    return this.events.feed(query);
  }
}
