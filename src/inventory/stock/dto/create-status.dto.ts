import { ApiProperty } from '@nestjs/swagger';
import { IsBoolean, IsString, Matches, MaxLength, MinLength } from 'class-validator';

export class CreateStatusDto {
  @ApiProperty({ example: 'INSPECTION', description: 'unique; stored upper-case; letters, digits, _ and -' })
  @IsString() @MinLength(1) @MaxLength(32) @Matches(/^[A-Za-z0-9_-]+$/, { message: 'must contain only letters, digits, _ and -' })
  code: string;

  @ApiProperty() @IsString() @MinLength(1) @MaxLength(100)
  name: string;

  @ApiProperty({ description: 'whether stock in this status counts as available (fixed once created)' }) @IsBoolean()
  isAvailable: boolean;
}
