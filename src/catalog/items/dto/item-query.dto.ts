import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional } from 'class-validator';
import { PageQuery, toBoolean } from '../../../common/pagination';
import { ITEM_KINDS, type ItemKind } from '../item.entity';

export class ItemQuery extends PageQuery {
  @ApiPropertyOptional({ enum: ITEM_KINDS })
  @IsOptional() @IsIn(ITEM_KINDS)
  itemKind?: ItemKind;

  @ApiPropertyOptional({ type: Boolean })
  @IsOptional() @Transform(toBoolean) @IsBoolean()
  isActive?: boolean;
}
