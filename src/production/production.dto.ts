import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsNumber, IsOptional, IsString, Length, Max, MaxLength, Min } from 'class-validator';
import { IsCalendarDate } from '../common/dates';
import { MaxDecimals } from '../common/decimals';
import { PageQuery } from '../common/pagination';
import { IsUuidRef } from '../common/uuid';
import { IsOptionalNonNull, NestedArray } from '../common/validation';
import { MAX_DOCUMENT_LINES, Quantity } from '../documents/dto-rules';

export const BOM_STATUSES = ['draft', 'active', 'obsolete'] as const;
export type BomStatus = (typeof BOM_STATUSES)[number];
export const WO_STATUSES = ['draft', 'released', 'completed', 'cancelled'] as const;
export type WoStatus = (typeof WO_STATUSES)[number];

export class BomComponentDto {
  @ApiProperty({ description: 'a stock item, not the output item nor one whose active BOM (at any depth) uses it' })
  @IsUuidRef()
  itemId: string;

  @ApiProperty({ description: 'per outputQty of the output item, in uomId; > 0, at most 6 decimals' })
  @Quantity()
  qtyPer: number;

  @ApiPropertyOptional({ description: 'a UOM of the component (its base UOM or one of its uomConversions); default the base UOM' })
  @IsOptional() @IsUuidRef()
  uomId?: string;

  @ApiPropertyOptional({ default: 0, description: 'expected loss as a fraction: 0.05 = 5% more is required; 0 ≤ scrapFactor < 100, at most 6 decimals' })
  @IsOptional() @IsNumber({ allowNaN: false, allowInfinity: false }) @MaxDecimals(6) @Min(0) @Max(99.999999)
  scrapFactor?: number;
}

export class CreateBomDto {
  @ApiProperty({ description: 'the output item (a stock item)' }) @IsUuidRef() itemId: string;

  @ApiPropertyOptional({ default: 1, description: 'how much of the output item the components make, in its base unit (> 0, at most that unit\'s decimals)' })
  @IsOptional() @Quantity()
  outputQty?: number;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 2000 }) @IsOptional() @IsString() @MaxLength(2000) notes?: string | null;

  @ApiProperty({ type: [BomComponentDto], description: 'at least one; numbered in the order given' })
  @NestedArray(BomComponentDto, { min: 1, max: MAX_DOCUMENT_LINES })
  components: BomComponentDto[];
}

export class UpdateBomDto {
  @ApiPropertyOptional({ description: 'in the output item\'s base unit (> 0, at most that unit\'s decimals)' }) @IsOptionalNonNull() @Quantity() outputQty?: number;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsString() @MaxLength(2000) notes?: string | null;

  @ApiPropertyOptional({ type: [BomComponentDto], description: 'replaces all components' })
  @IsOptionalNonNull() @NestedArray(BomComponentDto, { min: 1, max: MAX_DOCUMENT_LINES })
  components?: BomComponentDto[];
}

export class BomQuery extends PageQuery {
  @ApiPropertyOptional() @IsOptional() @IsUuidRef() itemId?: string;
  @ApiPropertyOptional({ enum: BOM_STATUSES }) @IsOptional() @IsIn(BOM_STATUSES) status?: BomStatus;
}

export class CreateWorkOrderDto {
  @ApiProperty({ description: 'the item to make (an active stock item)' }) @IsUuidRef() itemId: string;
  @ApiProperty({ description: 'in the item\'s base unit' }) @Quantity() qtyPlanned: number;
  @ApiProperty() @IsUuidRef() facilityId: string;
  @ApiPropertyOptional({ description: 'an active BOM of the item; default its active BOM (none → 409)' }) @IsOptional() @IsUuidRef() bomId?: string;
  @ApiPropertyOptional({ description: 'a location of the facility where the output goes' }) @IsOptional() @IsUuidRef() outputLocationId?: string;
  @ApiPropertyOptional({ description: 'YYYY-MM-DD' }) @IsOptional() @IsCalendarDate() dueDate?: string;
}

export class CompleteWorkOrderDto {
  @ApiPropertyOptional({ description: 'in the item\'s base unit, > 0 and at most qtyPlanned; default qtyPlanned' })
  @IsOptional() @Quantity()
  qtyCompleted?: number;

  @ApiPropertyOptional({ description: 'default the order\'s outputLocationId (one of them is required)' })
  @IsOptional() @IsUuidRef()
  outputLocationId?: string;

  @ApiPropertyOptional({ description: 'lot-tracked output: the lot made' }) @IsOptional() @IsString() @Length(1, 100) lotNo?: string;
  @ApiPropertyOptional({ description: 'YYYY-MM-DD, expiry of a new lot (expiry-tracked output)' }) @IsOptional() @IsCalendarDate() expiryDate?: string;

  @ApiPropertyOptional({ type: [String], description: 'serial-tracked output: one per unit made' })
  @IsOptional() @IsArray() @ArrayMaxSize(10000) @IsString({ each: true }) @Length(1, 100, { each: true })
  serialNos?: string[];
}

export class WorkOrderQuery extends PageQuery {
  @ApiPropertyOptional({ enum: WO_STATUSES }) @IsOptional() @IsIn(WO_STATUSES) status?: WoStatus;
  @ApiPropertyOptional() @IsOptional() @IsUuidRef() itemId?: string;
  @ApiPropertyOptional() @IsOptional() @IsUuidRef() facilityId?: string;
}
