import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsOptional, IsString, Length, MaxLength, MinLength } from 'class-validator';
import { IsCalendarDate } from '../../../common/dates';
import { IsUuidRef } from '../../../common/uuid';
import { SignedQuantity } from '../../../documents/dto-rules';

export class CreateAdjustmentDto {
  @ApiProperty() @IsUuidRef()
  itemId: string;

  @ApiProperty() @IsUuidRef()
  locationId: string;

  @ApiPropertyOptional({ description: 'default: the AVAILABLE status' }) @IsOptional() @IsUuidRef()
  statusId?: string;

  @ApiProperty({ description: 'signed change in base units; not 0; at most the base UOM decimals', example: -2 })
  @SignedQuantity()
  qtyDelta: number;

  @ApiProperty({ minLength: 1, maxLength: 500 }) @IsString() @MinLength(1) @MaxLength(500)
  reason: string;

  @ApiPropertyOptional({ description: 'required for lot-tracked items; a new lot on a positive delta' })
  @IsOptional() @IsString() @Length(1, 100)
  lotNo?: string;

  @ApiPropertyOptional({ format: 'date', description: 'YYYY-MM-DD; for a new lot (required when expiry-tracked)' })
  @IsOptional() @IsCalendarDate()
  expiryDate?: string;

  @ApiPropertyOptional({ type: [String], description: 'serial-tracked items: one per unit' })
  @IsOptional() @IsArray() @ArrayMaxSize(10000) @IsString({ each: true }) @Length(1, 100, { each: true })
  serialNos?: string[];
}
