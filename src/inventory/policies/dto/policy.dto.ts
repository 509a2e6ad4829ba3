import { ApiProperty, ApiPropertyOptional, OmitType, PartialType } from '@nestjs/swagger';
import { IsBoolean, IsInt, IsOptional, Max, Min } from 'class-validator';
import { PageQuery } from '../../../common/pagination';
import { IsUuidRef } from '../../../common/uuid';
import { IsOptionalNonNull } from '../../../common/validation';
import { NonNegativeQuantity } from '../../../documents/dto-rules';

const QTY = 'base units, >= 0, at most the base UOM decimals';

export class CreatePolicyDto {
  @ApiProperty({ description: 'a stock item; one policy per (item, facility)' }) @IsUuidRef() itemId: string;
  @ApiProperty() @IsUuidRef() facilityId: string;
  @ApiProperty({ description: `${QTY}; <= maxQty` }) @NonNegativeQuantity() minQty: number;
  @ApiProperty({ description: QTY }) @NonNegativeQuantity() maxQty: number;
  @ApiPropertyOptional({ description: QTY, default: 0 }) @IsOptionalNonNull() @NonNegativeQuantity() safetyStock?: number;
  @ApiPropertyOptional({ description: `${QTY}; the order multiple (0: none)`, default: 0 })
  @IsOptionalNonNull() @NonNegativeQuantity()
  reorderQty?: number;
  @ApiPropertyOptional({ minimum: 0, maximum: 3650, default: 0 }) @IsOptionalNonNull() @IsInt() @Min(0) @Max(3650) leadTimeDays?: number;
  @ApiPropertyOptional({ default: true, description: 'only active policies make suggestions' }) @IsOptionalNonNull() @IsBoolean() isActive?: boolean;
}

/** Any field but the item and the facility; null is refused (absent means unchanged). */
export class UpdatePolicyDto extends PartialType(OmitType(CreatePolicyDto, ['itemId', 'facilityId'] as const), {
  skipNullProperties: false,
}) {}

export class PolicyQuery extends PageQuery {
  @ApiPropertyOptional() @IsOptional() @IsUuidRef() itemId?: string;
  @ApiPropertyOptional() @IsOptional() @IsUuidRef() facilityId?: string;
}
