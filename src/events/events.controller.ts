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
      '`nextCursor` is always a string: poll again with `after=<nextCursor>` (an empty page when nothing came). It is the position ' +
      'the read covered: the last event of a full page, else the last event the read looked at, so a poll goes on after the events ' +
      'of other types it passed over. With `types`, a page looks at no more than 5,000 events: an empty filtered page says that none of ' +
      'those matched, and its nextCursor is past them. ' +
      'Events are kept EVENT_RETENTION_DAYS days (default 30); a cursor whose following events were deleted → 410 cursor_expired. ' +
      'Without `after` the feed starts after the newest event deleted, so the cursor it hands out has missed nothing. ' +
      'Malformed `after` or `types`, more than 20 types, `limit` outside 1..500 → 400.',
  })
  feed(@Query() query: EventFeedQuery) {
    return this.events.feed(query);
  }
}
