import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsEmail, IsIn, IsOptional, IsString, Length, Matches, MaxLength, MinLength } from 'class-validator';
import { IsCalendarDate } from '../common/dates';
import { PageQuery, toBoolean } from '../common/pagination';
import { IsUuidRef } from '../common/uuid';
import { IsOptionalNonNull, NestedArray } from '../common/validation';
import { MAX_DOCUMENT_LINES, NonNegativeQuantity, Quantity } from '../documents/dto-rules';

// ── suppliers ─────────────────────────────────────────────────────────────────────────────────────

/** ISO 4217 code, three capital letters. */
const Currency = () => applyDecorators(IsString(), Matches(/^[A-Z]{3}$/, { message: '$property must be an ISO 4217 code of three capital letters, e.g. EUR' }));

export const DEFAULT_CURRENCY = 'USD';

export class CreateSupplierDto {
  @ApiProperty({ minLength: 1, maxLength: 64, example: 'ACME', description: 'unique per tenant' })
  @IsString() @MinLength(1) @MaxLength(64)
  code: string;

  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Acme Industrial Supply' })
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

  @ApiPropertyOptional({ example: 'EUR', default: DEFAULT_CURRENCY, description: 'ISO 4217; the default currency of its purchase orders' })
  @IsOptionalNonNull() @Currency()
  currency?: string;

  @ApiPropertyOptional({ default: true })
  @IsOptionalNonNull() @IsBoolean()
  isActive?: boolean;
}

export class UpdateSupplierDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 64 }) @IsOptionalNonNull() @IsString() @MinLength(1) @MaxLength(64) code?: string;
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 }) @IsOptionalNonNull() @IsString() @MinLength(1) @MaxLength(200) name?: string;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsEmail() @MaxLength(254) email?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsString() @MaxLength(50) phone?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsString() @MaxLength(500) address?: string | null;
  @ApiPropertyOptional({ example: 'EUR' }) @IsOptionalNonNull() @Currency() currency?: string;
  @ApiPropertyOptional() @IsOptionalNonNull() @IsBoolean() isActive?: boolean;
}

export class SupplierQuery extends PageQuery {
  @ApiPropertyOptional({ type: Boolean })
  @IsOptional() @Transform(toBoolean) @IsBoolean()
  isActive?: boolean;
}

// ── purchase orders ───────────────────────────────────────────────────────────────────────────────

export const PO_STATUSES = ['draft', 'submitted', 'approved', 'sent', 'partially_received', 'received', 'cancelled'] as const;
export type PoStatus = (typeof PO_STATUSES)[number];

export class PurchaseOrderLineDto {
  @ApiProperty() @IsUuidRef() itemId: string;

  @ApiPropertyOptional({ description: 'quantity ordered in `uomId` (> 0, at most that unit\'s decimals). `qty` is accepted as its alias; give one of them' })
  @IsOptional() @Quantity()
  qtyOrdered?: number;

  @ApiPropertyOptional({ description: 'alias of qtyOrdered' })
  @IsOptional() @Quantity()
  qty?: number;

  @ApiPropertyOptional({ description: 'a UOM of the item (its base UOM or one of its uomConversions); default the base UOM' })
  @IsOptional() @IsUuidRef()
  uomId?: string;

  @ApiProperty({ description: 'price of one `uomId`, in the order\'s currency; >= 0, at most 999,999,999.999999 and 6 decimals. The order\'s totalAmount = Σ qtyOrdered × unitPrice, stored exactly, is a JSON number exact up to 15 significant digits', maximum: 999_999_999.999999, minimum: 0 })
  @NonNegativeQuantity()
  unitPrice: number;
}

export class CreatePurchaseOrderDto {
  @ApiProperty() @IsUuidRef() supplierId: string;
  @ApiProperty({ description: 'where the goods are received' }) @IsUuidRef() facilityId: string;
  @ApiPropertyOptional({ description: 'ISO 4217; default the supplier\'s currency' }) @IsOptionalNonNull() @Currency() currency?: string;
  @ApiPropertyOptional({ description: 'YYYY-MM-DD; default today (UTC)' }) @IsOptionalNonNull() @IsCalendarDate() orderDate?: string;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'YYYY-MM-DD' }) @IsOptional() @IsCalendarDate() expectedDate?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 2000 }) @IsOptional() @IsString() @MaxLength(2000) notes?: string | null;

  @ApiPropertyOptional({ type: [PurchaseOrderLineDto], description: 'numbered lineNo 1..n in the order given; may be empty for a draft (submit needs one)' })
  @IsOptionalNonNull() @NestedArray(PurchaseOrderLineDto, { max: MAX_DOCUMENT_LINES })
  lines?: PurchaseOrderLineDto[];
}

export class UpdatePurchaseOrderDto {
  @ApiPropertyOptional() @IsOptionalNonNull() @IsUuidRef() supplierId?: string;
  @ApiPropertyOptional() @IsOptionalNonNull() @IsUuidRef() facilityId?: string;
  @ApiPropertyOptional() @IsOptionalNonNull() @Currency() currency?: string;
  @ApiPropertyOptional() @IsOptionalNonNull() @IsCalendarDate() orderDate?: string;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsCalendarDate() expectedDate?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsString() @MaxLength(2000) notes?: string | null;

  @ApiPropertyOptional({ type: [PurchaseOrderLineDto], description: 'replaces all lines' })
  @IsOptionalNonNull() @NestedArray(PurchaseOrderLineDto, { max: MAX_DOCUMENT_LINES })
  lines?: PurchaseOrderLineDto[];
}

export class PurchaseOrderQuery extends PageQuery {
  @ApiPropertyOptional({ enum: PO_STATUSES }) @IsOptional() @IsIn(PO_STATUSES) status?: PoStatus;
  @ApiPropertyOptional() @IsOptional() @IsUuidRef() supplierId?: string;
  @ApiPropertyOptional() @IsOptional() @IsUuidRef() facilityId?: string;
}

export class ReceiptLineDto {
  @ApiProperty({ description: 'a line of this purchase order' }) @IsUuidRef() poLineId: string;

  @ApiPropertyOptional({ description: "the order line's item, as the receipt answers it; when given it must be that item (400 otherwise): the line's item is received, never another" })
  @IsOptional() @IsUuidRef()
  itemId?: string;

  @ApiProperty({ description: 'in the order line\'s UOM; at most what is still open on the line (else 409 over_receipt)' })
  @Quantity()
  qty: number;

  @ApiPropertyOptional({ description: 'a location of the order\'s facility (400 otherwise); required for stock items, refused for others' })
  @IsOptional() @IsUuidRef()
  locationId?: string;

  @ApiPropertyOptional({ description: 'stock status to receive into (e.g. QUARANTINE); default AVAILABLE' })
  @IsOptional() @IsUuidRef()
  statusId?: string;

  @ApiPropertyOptional({ description: 'lot-tracked items: required' }) @IsOptional() @IsString() @Length(1, 100) lotNo?: string;

  @ApiPropertyOptional({ description: 'YYYY-MM-DD, expiry of a new lot (required for expiry-tracked items)' })
  @IsOptional() @IsCalendarDate()
  expiryDate?: string;

  @ApiPropertyOptional({ type: [String], description: 'serial-tracked items: one per base unit received' })
  @IsOptional() @IsArray() @ArrayMaxSize(10000) @IsString({ each: true }) @Length(1, 100, { each: true })
  serialNos?: string[];
}

export class CreateReceiptDto {
  @ApiProperty({ type: [ReceiptLineDto] })
  @NestedArray(ReceiptLineDto, { min: 1, max: MAX_DOCUMENT_LINES })
  lines: ReceiptLineDto[];

  @ApiPropertyOptional({ maxLength: 2000 }) @IsOptional() @IsString() @MaxLength(2000) notes?: string;
}

// ── requisitions ──────────────────────────────────────────────────────────────────────────────────

export const REQ_STATUSES = ['draft', 'submitted', 'approved', 'ordered'] as const;
export type ReqStatus = (typeof REQ_STATUSES)[number];

export class RequisitionLineDto {
  @ApiProperty() @IsUuidRef() itemId: string;
  @ApiProperty({ description: 'in `uomId` (default the base UOM)' }) @Quantity() qty: number;
  @ApiPropertyOptional({ description: 'a UOM of the item; default the base UOM' }) @IsOptional() @IsUuidRef() uomId?: string;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'who to buy from; needed by convert' }) @IsOptional() @IsUuidRef() supplierId?: string | null;
}

export class CreateRequisitionDto {
  @ApiProperty() @IsUuidRef() facilityId: string;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'YYYY-MM-DD' }) @IsOptional() @IsCalendarDate() neededBy?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 2000 }) @IsOptional() @IsString() @MaxLength(2000) notes?: string | null;

  @ApiPropertyOptional({ type: [RequisitionLineDto], description: 'numbered lineNo 1..n; submit needs one' })
  @IsOptionalNonNull() @NestedArray(RequisitionLineDto, { max: MAX_DOCUMENT_LINES })
  lines?: RequisitionLineDto[];
}

export class UpdateRequisitionDto {
  @ApiPropertyOptional() @IsOptionalNonNull() @IsUuidRef() facilityId?: string;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsCalendarDate() neededBy?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsString() @MaxLength(2000) notes?: string | null;

  @ApiPropertyOptional({ type: [RequisitionLineDto], description: 'replaces all lines' })
  @IsOptionalNonNull() @NestedArray(RequisitionLineDto, { max: MAX_DOCUMENT_LINES })
  lines?: RequisitionLineDto[];
}

export class RequisitionQuery extends PageQuery {
  @ApiPropertyOptional({ enum: REQ_STATUSES }) @IsOptional() @IsIn(REQ_STATUSES) status?: ReqStatus;
  @ApiPropertyOptional() @IsOptional() @IsUuidRef() facilityId?: string;
}
