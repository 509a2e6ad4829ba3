import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional, IsUUID } from 'class-validator';
import { IsDateTime } from '../../../common/dates';
import { PageQuery, toBoolean } from '../../../common/pagination';
import { TRANSACTION_TYPES } from '../../ledger/posting';

export class BalanceQuery extends PageQuery {
  @ApiPropertyOptional() @IsOptional() @IsUUID() itemId?: string;
  @ApiPropertyOptional() @IsOptional() @IsUUID() facilityId?: string;
  @ApiPropertyOptional() @IsOptional() @IsUUID() locationId?: string;
  @ApiPropertyOptional() @IsOptional() @IsUUID() lotId?: string;
  @ApiPropertyOptional() @IsOptional() @IsUUID() statusId?: string;
}

export class AvailabilityQuery extends PageQuery {
  @ApiPropertyOptional() @IsOptional() @IsUUID() itemId?: string;
  @ApiPropertyOptional() @IsOptional() @IsUUID() facilityId?: string;
  @ApiPropertyOptional({ description: 'not with groupBy=facility' }) @IsOptional() @IsUUID() locationId?: string;
  @ApiPropertyOptional({ enum: ['location', 'facility'], default: 'location', description: 'a cursor (`after`) carries the grouping of its list, as its other filters' })
  @IsOptional() @IsIn(['location', 'facility'])
  groupBy?: 'location' | 'facility';
}

export class TransactionQuery extends PageQuery {
  @ApiPropertyOptional() @IsOptional() @IsUUID() itemId?: string;
  @ApiPropertyOptional() @IsOptional() @IsUUID() facilityId?: string;
  @ApiPropertyOptional() @IsOptional() @IsUUID() locationId?: string;
  @ApiPropertyOptional({ enum: TRANSACTION_TYPES }) @IsOptional() @IsIn(TRANSACTION_TYPES) type?: string;
  @ApiPropertyOptional() @IsOptional() @IsUUID() sourceId?: string;
  @ApiPropertyOptional({ description: 'postedAt >= from (ISO 8601)' }) @IsOptional() @IsDateTime() from?: string;
  @ApiPropertyOptional({ description: 'postedAt < to (ISO 8601)' }) @IsOptional() @IsDateTime() to?: string;
}

export class LotQuery extends PageQuery {
  @ApiPropertyOptional() @IsOptional() @IsUUID() itemId?: string;
}

export class SerialQuery extends PageQuery {
  @ApiPropertyOptional() @IsOptional() @IsUUID() itemId?: string;
  @ApiPropertyOptional() @IsOptional() @IsUUID() locationId?: string;
  @ApiPropertyOptional() @IsOptional() @Transform(toBoolean) @IsBoolean() inStock?: boolean;
}
