import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsIn,
  IsOptional,
  IsPositive,
  IsString,
  Max,
  MaxLength,
  MinLength,
} from 'class-validator';
import { MaxDecimals } from '../../../common/decimals';
import { IsUuidRef } from '../../../common/uuid';
import { IsOptionalNonNull, NestedArray } from '../../../common/validation';
import { IDENTIFIER_TYPES, type IdentifierType, ITEM_KINDS, type ItemKind, TRACKING_MODES, type TrackingMode } from '../item.entity';

export const MAX_ITEM_CHILDREN = 100;
export const MAX_CONVERSION_FACTOR = 1_000_000_000;

export class ItemIdentifierDto {
  @ApiProperty({ enum: IDENTIFIER_TYPES })
  @IsIn(IDENTIFIER_TYPES)
  type: IdentifierType;

  @ApiProperty({ minLength: 1, maxLength: 100, example: '04006381333931', description: '(type, value) is unique per tenant' })
  @IsString() @MinLength(1) @MaxLength(100)
  value: string;
}

export class ItemAttributeDto {
  @ApiProperty({ minLength: 1, maxLength: 100, example: 'color', description: 'unique within the item' })
  @IsString() @MinLength(1) @MaxLength(100)
  name: string;

  @ApiProperty({ maxLength: 1000, example: 'red' })
  @IsString() @MaxLength(1000)
  value: string;
}

export class ItemUomConversionDto {
  @ApiProperty({ format: 'uuid', description: 'a UOM other than the base UOM; each UOM at most once' })
  @IsUuidRef()
  uomId: string;

  @ApiProperty({ minimum: 0, exclusiveMinimum: true, maximum: MAX_CONVERSION_FACTOR, example: 12, description: '1 of uomId = factor base units; at most 6 decimals' })
  @MaxDecimals(6) @IsPositive() @Max(MAX_CONVERSION_FACTOR)
  factor: number;
}

export class CreateItemDto {
  @ApiProperty({ minLength: 1, maxLength: 64, example: 'WIDGET-001', description: 'unique per tenant' })
  @IsString() @MinLength(1) @MaxLength(64)
  itemNo: string;

  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Widget, blue' })
  @IsString() @MinLength(1) @MaxLength(200)
  name: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 2000 })
  @IsOptional() @IsString() @MaxLength(2000)
  description?: string | null;

  @ApiPropertyOptional({ enum: ITEM_KINDS, default: 'stock', description: 'only stock items can be posted, reserved or counted' })
  @IsOptionalNonNull() @IsIn(ITEM_KINDS)
  itemKind?: ItemKind;

  @ApiProperty({ format: 'uuid', description: 'the UOM the ledger stores quantities in' })
  @IsUuidRef()
  baseUomId: string;

  @ApiPropertyOptional({ enum: TRACKING_MODES, default: 'none' })
  @IsOptionalNonNull() @IsIn(TRACKING_MODES)
  lotTracking?: TrackingMode;

  @ApiPropertyOptional({ enum: TRACKING_MODES, default: 'none' })
  @IsOptionalNonNull() @IsIn(TRACKING_MODES)
  serialTracking?: TrackingMode;

  @ApiPropertyOptional({ enum: TRACKING_MODES, default: 'none', description: "'required' needs lotTracking 'required' (expiry lives on the lot)" })
  @IsOptionalNonNull() @IsIn(TRACKING_MODES)
  expiryTracking?: TrackingMode;

  @ApiPropertyOptional({ default: true, description: 'inactive items cannot be used on new documents or postings' })
  @IsOptionalNonNull() @IsBoolean()
  isActive?: boolean;

  @ApiPropertyOptional({ type: [ItemIdentifierDto], maxItems: MAX_ITEM_CHILDREN })
  @IsOptionalNonNull() @NestedArray(ItemIdentifierDto, { max: MAX_ITEM_CHILDREN })
  identifiers?: ItemIdentifierDto[];

  @ApiPropertyOptional({ type: [ItemAttributeDto], maxItems: MAX_ITEM_CHILDREN })
  @IsOptionalNonNull() @NestedArray(ItemAttributeDto, { max: MAX_ITEM_CHILDREN })
  attributes?: ItemAttributeDto[];

  @ApiPropertyOptional({ type: [ItemUomConversionDto], maxItems: MAX_ITEM_CHILDREN })
  @IsOptionalNonNull() @NestedArray(ItemUomConversionDto, { max: MAX_ITEM_CHILDREN })
  uomConversions?: ItemUomConversionDto[];
}
