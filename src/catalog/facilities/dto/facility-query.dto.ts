import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional } from 'class-validator';
import { PageQuery, toBoolean } from '../../../common/pagination';
import { FACILITY_TYPES, type FacilityType } from '../facility.entity';

export class FacilityQuery extends PageQuery {
  @ApiPropertyOptional({ enum: FACILITY_TYPES })
  @IsOptional() @IsIn(FACILITY_TYPES)
  type?: FacilityType;

  @ApiPropertyOptional({ type: Boolean })
  @IsOptional() @Transform(toBoolean) @IsBoolean()
  isActive?: boolean;
}
