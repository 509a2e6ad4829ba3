import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { toInteger } from '../common/pagination';

export const FEED_MAX_LIMIT = 500;
export const FEED_DEFAULT_LIMIT = 100;
/**
 * Most events one page of the feed reads when `types` filters it: a filter that matches little or nothing
 * must not make a request read the tenant's whole feed. The page's cursor moves past what it read.
 */
export const FEED_SCAN = 10 * FEED_MAX_LIMIT;
/** Most entries `types` may list. */
export const MAX_TYPES = 20;
/** One entry of `types`: an exact type (`stock.changed`) or a prefix (`stock.*`). */
export const TYPE_PATTERN = /^[a-z_]{1,40}\.(?:[a-z_]{1,40}|\*)$/;

/** `GET /v1/events?after=&types=&limit=` (CONTRACT §9). */
export class EventFeedQuery {
  @ApiPropertyOptional({ description: 'a `nextCursor` of an earlier page; absent: from the start of what the feed keeps (after the newest event the retention job deleted)' })
  @IsOptional() @IsString() @MaxLength(100)
  after?: string;

  @ApiPropertyOptional({ description: `comma list of at most ${MAX_TYPES} exact types (\`stock.changed\`) or prefixes (\`purchase_order.*\`)` })
  @IsOptional() @IsString() @MaxLength(1000)
  @Matches(/^[a-z_.*]+(,[a-z_.*]+)*$/, { message: 'types must be a comma list of event types or prefixes such as stock.*' })
  types?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: FEED_MAX_LIMIT, default: FEED_DEFAULT_LIMIT })
  @IsOptional() @Transform(toInteger) @IsInt() @Min(1) @Max(FEED_MAX_LIMIT)
  limit: number = FEED_DEFAULT_LIMIT;
}
