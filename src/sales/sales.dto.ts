import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsEmail, IsIn, IsOptional, IsString, Length, MaxLength, MinLength } from 'class-validator';
import { IsCalendarDate } from '../common/dates';
import { PageQuery, toBoolean } from '../common/pagination';
import { IsUuidRef } from '../common/uuid';
import { IsOptionalNonNull, NestedArray } from '../common/validation';
import { MAX_DOCUMENT_LINES, NonNegativeQuantity, Quantity } from '../documents/dto-rules';

// ── customers ─────────────────────────────────────────────────────────────────────────────────────

export class CreateCustomerDto {
  @ApiProperty({ minLength: 1, maxLength: 64, example: 'CUST-1', description: 'unique per tenant' })
  @IsString() @MinLength(1) @MaxLength(64)
  code: string;

  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Northwind Traders' })
  @IsString() @MinLength(1) @MaxLength(200)
  name: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 254 })
  @IsOptional() @IsEmail() @MaxLength(254)
  email?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 50 })
  @IsOptional() @IsString() @MaxLength(50)
  phone?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 500 })
  @IsOptional() @IsString() @MaxLength(500)
  address?: string | null;

  @ApiPropertyOptional({ default: true })
  @IsOptionalNonNull() @IsBoolean()
  isActive?: boolean;
}

export class UpdateCustomerDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 64 }) @IsOptionalNonNull() @IsString() @MinLength(1) @MaxLength(64) code?: string;
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 }) @IsOptionalNonNull() @IsString() @MinLength(1) @MaxLength(200) name?: string;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsEmail() @MaxLength(254) email?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsString() @MaxLength(50) phone?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsString() @MaxLength(500) address?: string | null;
  @ApiPropertyOptional() @IsOptionalNonNull() @IsBoolean() isActive?: boolean;
}

export class CustomerQuery extends PageQuery {
  @ApiPropertyOptional({ type: Boolean })
  @IsOptional() @Transform(toBoolean) @IsBoolean()
  isActive?: boolean;
}

// ── sales orders ──────────────────────────────────────────────────────────────────────────────────

export const SO_STATUSES = ['draft', 'open', 'partially_shipped', 'shipped', 'cancelled'] as const;
export type SoStatus = (typeof SO_STATUSES)[number];

export class SalesOrderLineDto {
  @ApiProperty({ description: 'an active item of any kind (stock, non_stock, service)' }) @IsUuidRef() itemId: string;

  @ApiProperty({ description: 'quantity in `uomId` (> 0, at most that unit\'s decimals)' })
  @Quantity()
  qty: number;

  @ApiPropertyOptional({ description: 'a UOM of the item (its base UOM or one of its uomConversions); default the base UOM' })
  @IsOptional() @IsUuidRef()
  uomId?: string;

  @ApiProperty({ description: 'price of one `uomId`; >= 0, at most 999,999,999.999999 and 6 decimals. The order\'s totalAmount = Σ qty × unitPrice, stored exactly, is a JSON number exact up to 15 significant digits', maximum: 999_999_999.999999, minimum: 0 })
  @NonNegativeQuantity()
  unitPrice: number;
}

export class CreateSalesOrderDto {
  @ApiProperty() @IsUuidRef() customerId: string;
  @ApiProperty({ description: 'where the goods are reserved and shipped from' }) @IsUuidRef() facilityId: string;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'YYYY-MM-DD' }) @IsOptional() @IsCalendarDate() requestedDate?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 2000 }) @IsOptional() @IsString() @MaxLength(2000) notes?: string | null;

  @ApiPropertyOptional({ type: [SalesOrderLineDto], description: 'numbered lineNo 1..n in the order given; may be empty for a draft (open needs one)' })
  @IsOptionalNonNull() @NestedArray(SalesOrderLineDto, { max: MAX_DOCUMENT_LINES })
  lines?: SalesOrderLineDto[];
}

export class UpdateSalesOrderDto {
  @ApiPropertyOptional() @IsOptionalNonNull() @IsUuidRef() customerId?: string;
  @ApiPropertyOptional() @IsOptionalNonNull() @IsUuidRef() facilityId?: string;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsCalendarDate() requestedDate?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsString() @MaxLength(2000) notes?: string | null;

  @ApiPropertyOptional({ type: [SalesOrderLineDto], description: 'replaces all lines' })
  @IsOptionalNonNull() @NestedArray(SalesOrderLineDto, { max: MAX_DOCUMENT_LINES })
  lines?: SalesOrderLineDto[];
}

export class SalesOrderQuery extends PageQuery {
  @ApiPropertyOptional({ enum: SO_STATUSES }) @IsOptional() @IsIn(SO_STATUSES) status?: SoStatus;
  @ApiPropertyOptional() @IsOptional() @IsUuidRef() customerId?: string;
  @ApiPropertyOptional() @IsOptional() @IsUuidRef() facilityId?: string;
}

export class ShipLineDto {
  @ApiProperty({ description: 'a line of this sales order' }) @IsUuidRef() lineId: string;

  @ApiProperty({ description: 'in the order line\'s UOM; at most what is still outstanding on the line (else 409 invalid_state)' })
  @Quantity()
  qty: number;

  @ApiPropertyOptional({ description: 'stock lines: ship from this location of the order\'s facility (allocated there first when needed)' })
  @IsOptional() @IsUuidRef()
  locationId?: string;

  @ApiPropertyOptional({ description: 'stock lines of lot-tracked items: ship from this lot' })
  @IsOptional() @IsUuidRef()
  lotId?: string;

  @ApiPropertyOptional({ type: [String], description: 'serial-tracked items: the serials shipped, one per base unit' })
  @IsOptional() @IsArray() @ArrayMaxSize(10000) @IsString({ each: true }) @Length(1, 100, { each: true })
  serialNos?: string[];
}

export class ShipSalesOrderDto {
  @ApiPropertyOptional({ type: [ShipLineDto], description: 'absent or empty: ship everything outstanding' })
  @IsOptionalNonNull() @NestedArray(ShipLineDto, { max: MAX_DOCUMENT_LINES })
  lines?: ShipLineDto[];
}
