import { ApiProperty } from '@nestjs/swagger';
import { IsInt, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';

export class CreateUomDto {
  @ApiProperty({ example: 'PAL', description: 'unique per tenant; letters, digits, _ and -' })
  @IsString() @MinLength(1) @MaxLength(16) @Matches(/^[A-Za-z0-9_-]+$/, { message: 'must contain only letters, digits, _ and -' })
  code: string;

  @ApiProperty({ example: 'Pallet' })
  @IsString() @MinLength(1) @MaxLength(100)
  name: string;

  @ApiProperty({ minimum: 0, maximum: 6, description: 'decimal places quantities in this UOM may have' })
  @IsInt() @Min(0) @Max(6)
  decimals: number;
}
