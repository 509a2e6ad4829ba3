import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsOptional, IsString, Length, MaxLength, MinLength } from 'class-validator';
import { IsUuidRef } from '../../../common/uuid';
import { NestedArray } from '../../../common/validation';
import { MAX_DOCUMENT_LINES, Quantity } from '../../../documents/dto-rules';

export class MoveLineDto {
  @ApiProperty() @IsUuidRef() itemId: string;

  @ApiProperty({ description: 'where the stock is now (an inactive location may be emptied)' }) @IsUuidRef() fromLocationId: string;

  @ApiPropertyOptional({ description: 'a location of the same facility; default fromLocationId' })
  @IsOptional() @IsUuidRef()
  toLocationId?: string;

  @ApiPropertyOptional({ description: 'the status the stock is in now; default AVAILABLE' })
  @IsOptional() @IsUuidRef()
  fromStatusId?: string;

  @ApiPropertyOptional({ description: 'the status it moves into; default fromStatusId (a line must change its location or its status)' })
  @IsOptional() @IsUuidRef()
  toStatusId?: string;

  @ApiPropertyOptional({ description: 'required for lot-tracked items, refused otherwise: the lot moved (it is kept)' })
  @IsOptional() @IsString() @Length(1, 100)
  lotNo?: string;

  @ApiPropertyOptional({ type: [String], description: 'serial-tracked items: one per base unit, each in stock at the from location and status; they move' })
  @IsOptional() @IsArray() @ArrayMaxSize(10000) @IsString({ each: true }) @Length(1, 100, { each: true })
  serialNos?: string[];

  @ApiProperty({ description: 'in `uomId` (default the base UOM), > 0, at most that UOM\'s decimals; moved in base units (rounded up); at most the source balance\'s qtyOnHand − qtyAllocated' })
  @Quantity()
  qty: number;

  @ApiPropertyOptional({ description: 'a UOM of the item: its base UOM or one of its uomConversions; default the base UOM' })
  @IsOptional() @IsUuidRef()
  uomId?: string;
}

export class CreateMoveDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 500 }) @IsOptional() @IsString() @MinLength(1) @MaxLength(500)
  reason?: string;

  @ApiProperty({ type: [MoveLineDto], description: '1..1,000 lines; each becomes a −qty and a +qty ledger line, in the order given' })
  @NestedArray(MoveLineDto, { min: 1, max: MAX_DOCUMENT_LINES })
  lines: MoveLineDto[];
}
