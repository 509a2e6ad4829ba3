import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { IsOptionalNonNull } from '../../../common/validation';
import { FACILITY_TYPES, type FacilityType } from '../facility.entity';

export class CreateFacilityDto {
  @ApiProperty({ minLength: 1, maxLength: 64, example: 'WH-EAST', description: 'unique per tenant' })
  @IsString() @MinLength(1) @MaxLength(64)
  code: string;

  @ApiProperty({ minLength: 1, maxLength: 200, example: 'East warehouse' })
  @IsString() @MinLength(1) @MaxLength(200)
  name: string;

  @ApiPropertyOptional({ enum: FACILITY_TYPES, default: 'warehouse' })
  @IsOptionalNonNull() @IsIn(FACILITY_TYPES)
  type?: FacilityType;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 500 })
  @IsOptional() @IsString() @MaxLength(500)
  address?: string | null;

  @ApiPropertyOptional({ default: true })
  @IsOptionalNonNull() @IsBoolean()
  isActive?: boolean;
}
