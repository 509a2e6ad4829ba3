import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { PageQuery } from '../../../common/pagination';
import { IsUuidRef } from '../../../common/uuid';
import { IsOptionalNonNull, NestedArray } from '../../../common/validation';
import { MAX_DOCUMENT_LINES } from '../../../documents/dto-rules';
import { Quantity } from '../../../documents/dto-rules';

export const TRANSFER_STATUSES = ['draft', 'shipped', 'received', 'cancelled'] as const;
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];

export class TransferLineDto {
  @ApiProperty() @IsUuidRef() itemId: string;

  @ApiProperty({ description: 'in `uomId` (default the base UOM), > 0, at most that UOM\'s decimals; stored in base units (rounded up)' })
  @Quantity()
  qty: number;

  @ApiPropertyOptional({ description: 'a UOM of the item: its base UOM or one of its uomConversions; default the base UOM' })
  @IsOptional() @IsUuidRef()
  uomId?: string;

  @ApiProperty({ description: 'a location of the from facility' }) @IsUuidRef() fromLocationId: string;

  @ApiProperty({ description: 'a location of the to facility' }) @IsUuidRef() toLocationId: string;

  @ApiPropertyOptional({ description: 'required for lot-tracked items, refused otherwise; a lot of the item' })
  @IsOptional() @IsUuidRef()
  lotId?: string;

  @ApiPropertyOptional({
    type: [String],
    description: 'serial-tracked items: one per base unit; omitted → the serials in stock at the from location are picked at ship (by serial number)',
  })
  @IsOptional() @IsArray() @ArrayMaxSize(10000) @IsString({ each: true }) @Length(1, 100, { each: true })
  serialNos?: string[];
}

class TransferLinesDto {
  @ApiProperty({ type: [TransferLineDto], description: 'numbered lineNo 1..n in the order given' })
  @NestedArray(TransferLineDto, { min: 1, max: MAX_DOCUMENT_LINES })
  lines: TransferLineDto[];
}

export class CreateTransferDto extends TransferLinesDto {
  @ApiProperty() @IsUuidRef() fromFacilityId: string;
  @ApiProperty({ description: 'must differ from fromFacilityId' }) @IsUuidRef() toFacilityId: string;
  @ApiPropertyOptional({ maxLength: 2000 }) @IsOptional() @IsString() @MaxLength(2000) notes?: string;
}

export class UpdateTransferDto {
  @ApiPropertyOptional({ type: String, maxLength: 2000, nullable: true }) @IsOptional() @IsString() @MaxLength(2000) notes?: string | null;

  @ApiPropertyOptional({ type: [TransferLineDto], description: 'replaces all lines' })
  @IsOptionalNonNull() @NestedArray(TransferLineDto, { min: 1, max: MAX_DOCUMENT_LINES })
  lines?: TransferLineDto[];
}

export class TransferQuery extends PageQuery {
  @ApiPropertyOptional({ enum: TRANSFER_STATUSES }) @IsOptional() @IsIn(TRANSFER_STATUSES) status?: TransferStatus;
  @ApiPropertyOptional() @IsOptional() @IsUuidRef() fromFacilityId?: string;
  @ApiPropertyOptional() @IsOptional() @IsUuidRef() toFacilityId?: string;
}
