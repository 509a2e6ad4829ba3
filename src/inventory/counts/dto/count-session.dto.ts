import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { PageQuery } from '../../../common/pagination';
import { IsUuidRef } from '../../../common/uuid';
import { NestedArray } from '../../../common/validation';
import { MAX_DOCUMENT_LINES, NonNegativeQuantity } from '../../../documents/dto-rules';

export const COUNT_STATUSES = ['open', 'completed', 'cancelled'] as const;
export type CountStatus = (typeof COUNT_STATUSES)[number];

export class CreateCountSessionDto {
  @ApiProperty() @IsUuidRef() facilityId: string;
  @ApiPropertyOptional({ maxLength: 2000 }) @IsOptional() @IsString() @MaxLength(2000) notes?: string;
}

export class CountLineDto {
  @ApiProperty({ description: 'a stock item that is not serial-tracked' }) @IsUuidRef() itemId: string;

  @ApiProperty({ description: "a location of the session's facility" }) @IsUuidRef() locationId: string;

  @ApiPropertyOptional({ description: 'required for lot-tracked items, refused otherwise; a lot number not yet known is created on completion' })
  @IsOptional() @IsString() @Length(1, 100)
  lotNo?: string;

  @ApiProperty({ minimum: 0, description: 'base units, >= 0, at most the base UOM decimals' })
  @NonNegativeQuantity()
  countedQty: number;
}

export class CountLinesDto {
  @ApiProperty({ type: [CountLineDto], description: 'a later count of the same (itemId, locationId, lotNo) replaces the earlier one' })
  @NestedArray(CountLineDto, { min: 1, max: MAX_DOCUMENT_LINES })
  lines: CountLineDto[];
}

export class CountSessionQuery extends PageQuery {
  @ApiPropertyOptional({ enum: COUNT_STATUSES }) @IsOptional() @IsIn(COUNT_STATUSES) status?: CountStatus;
  @ApiPropertyOptional() @IsOptional() @IsUuidRef() facilityId?: string;
}
