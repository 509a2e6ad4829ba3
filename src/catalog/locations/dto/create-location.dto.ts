import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { IsUuidRef } from '../../../common/uuid';
import { IsOptionalNonNull } from '../../../common/validation';
import { LOCATION_TYPES, type LocationType } from '../location.entity';

export class CreateLocationDto {
  @ApiProperty({ minLength: 1, maxLength: 64, example: 'A-01', description: "unique within the facility; no '/' (it separates path segments); fixed once created" })
  @IsString() @MinLength(1) @MaxLength(64) @Matches(/^[^/]+$/, { message: "must not contain '/'" })
  code: string;

  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Aisle 1' })
  @IsString() @MinLength(1) @MaxLength(200)
  name: string;

  @ApiPropertyOptional({ enum: LOCATION_TYPES, default: 'bin' })
  @IsOptionalNonNull() @IsIn(LOCATION_TYPES)
  type?: LocationType;

  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true, description: 'a location of the same facility; absent or null = a root; fixed once created' })
  @IsOptional() @IsUuidRef()
  parentId?: string | null;

  @ApiPropertyOptional({ default: true })
  @IsOptionalNonNull() @IsBoolean()
  isActive?: boolean;
}
