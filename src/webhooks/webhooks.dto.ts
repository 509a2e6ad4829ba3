import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { PageQuery } from '../common/pagination';
import { IsUuidRef } from '../common/uuid';
import { IsOptionalNonNull } from '../common/validation';
import { MAX_TYPES, TYPE_PATTERN } from '../events/events.dto';
import { DELIVERY_STATUSES } from './webhook.entity';

export const MAX_URL_LENGTH = 2000;
const TYPES_DESCRIPTION = `event types to deliver, as the feed's \`types\`: exact types (\`stock.changed\`) or prefixes (\`purchase_order.*\`); at most ${MAX_TYPES}; empty or absent: every event`;
const URL_DESCRIPTION =
  'http:// or https://; its host must be (and resolve only to) public addresses, unless listed in WEBHOOK_ALLOWED_HOSTS (else 400 validation_failed naming url)';

export class CreateWebhookDto {
  @ApiProperty({ maxLength: MAX_URL_LENGTH, example: 'https://hooks.example.com/inventory', description: URL_DESCRIPTION })
  @IsString() @MinLength(1) @MaxLength(MAX_URL_LENGTH)
  url: string;

  @ApiPropertyOptional({ type: [String], maxItems: MAX_TYPES, example: ['stock.changed', 'purchase_order.*'], description: TYPES_DESCRIPTION })
  @IsOptional() @IsArray() @ArrayMaxSize(MAX_TYPES) @IsString({ each: true })
  @Matches(TYPE_PATTERN, { each: true, message: 'each of types must be an event type (stock.changed) or a prefix (stock.*)' })
  types?: string[];

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 500 })
  @IsOptional() @IsString() @MaxLength(500)
  description?: string | null;
}

export class UpdateWebhookDto {
  @ApiPropertyOptional({ maxLength: MAX_URL_LENGTH, description: URL_DESCRIPTION })
  @IsOptionalNonNull() @IsString() @MinLength(1) @MaxLength(MAX_URL_LENGTH)
  url?: string;

  @ApiPropertyOptional({ type: [String], maxItems: MAX_TYPES, description: TYPES_DESCRIPTION })
  @IsOptionalNonNull() @IsArray() @ArrayMaxSize(MAX_TYPES) @IsString({ each: true })
  @Matches(TYPE_PATTERN, { each: true, message: 'each of types must be an event type (stock.changed) or a prefix (stock.*)' })
  types?: string[];

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 500 })
  @IsOptional() @IsString() @MaxLength(500)
  description?: string | null;

  @ApiPropertyOptional({ description: 'false stops deliveries (a 410 Gone answer sets it too); true resumes them, from where the webhook stopped' })
  @IsOptionalNonNull() @IsBoolean()
  isActive?: boolean;
}

export class DeliveryQuery extends PageQuery {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @IsOptional() @IsIn(DELIVERY_STATUSES)
  status?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'the attempts of one event' })
  @IsOptional() @IsUuidRef()
  eventId?: string;
}
