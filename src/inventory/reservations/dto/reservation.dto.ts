import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { IsDateTime } from '../../../common/dates';
import { PageQuery } from '../../../common/pagination';
import { IsUuidRef } from '../../../common/uuid';
import { IsOptionalNonNull, NestedArray } from '../../../common/validation';
import { Quantity } from '../../../documents/dto-rules';

export const DEMAND_TYPES = ['sales_order', 'work_order', 'transfer_order', 'manual'] as const;
export const RESERVATION_STATUSES = ['open', 'allocated', 'released', 'cancelled', 'fulfilled'] as const;

export class CreateReservationDto {
  @ApiProperty() @IsUuidRef() itemId: string;
  @ApiProperty() @IsUuidRef() facilityId: string;
  @ApiProperty({ description: 'base units, > 0' }) @Quantity() qty: number;
  @ApiPropertyOptional({ enum: DEMAND_TYPES, default: 'manual' }) @IsOptional() @IsIn(DEMAND_TYPES) demandType?: (typeof DEMAND_TYPES)[number];
  @ApiPropertyOptional() @IsOptional() @IsUuidRef() demandId?: string;
  @ApiPropertyOptional() @IsOptional() @IsUuidRef() demandLineId?: string;
  @ApiPropertyOptional({ type: String, format: 'date-time', description: 'ISO 8601; after it the reservation stops holding stock and reads as released' })
  @IsOptional() @IsDateTime()
  expiresAt?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(1000) notes?: string;
}

export class UpdateReservationDto {
  @ApiPropertyOptional({ description: 'not below qtyAllocated + qtyFulfilled; re-checked against ATP' }) @IsOptionalNonNull() @Quantity() qty?: number;
  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true, description: 'ISO 8601; null clears it' })
  @IsOptional() @IsDateTime()
  expiresAt?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 1000 }) @IsOptional() @IsString() @MaxLength(1000) notes?: string | null;
}

export class PinDto {
  @ApiProperty() @IsUuidRef() locationId: string;
  @ApiPropertyOptional({ description: 'required for lot-tracked items' }) @IsOptional() @IsUuidRef() lotId?: string;
  @ApiProperty() @Quantity() qty: number;
}

export class AllocateDto {
  @ApiPropertyOptional({ type: [PinDto], description: 'omit to allocate the remainder automatically (earliest expiry, oldest lot, location code)' })
  @IsOptional() @NestedArray(PinDto, { min: 1, max: 500 })
  allocations?: PinDto[];
}

export class ReservationQuery extends PageQuery {
  @ApiPropertyOptional({ enum: RESERVATION_STATUSES, description: 'default: open and allocated' })
  @IsOptional() @IsIn(RESERVATION_STATUSES) status?: string;
  @ApiPropertyOptional() @IsOptional() @IsUuidRef() itemId?: string;
  @ApiPropertyOptional() @IsOptional() @IsUuidRef() facilityId?: string;
  @ApiPropertyOptional() @IsOptional() @IsUuidRef() demandId?: string;
}

export class AllocationQuery extends PageQuery {
  @ApiPropertyOptional() @IsOptional() @IsUuidRef() reservationId?: string;
  @ApiPropertyOptional() @IsOptional() @IsUuidRef() itemId?: string;
  @ApiPropertyOptional() @IsOptional() @IsUuidRef() locationId?: string;
}
