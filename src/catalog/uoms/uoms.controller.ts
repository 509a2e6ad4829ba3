import { Body, Controller, Get, Post, Query } from '@nestjs/common';
import { ApiTags, ApiOperation } from '@nestjs/swagger';
import { Permissions } from '../../auth/decorators';
import { PageQuery } from '../../common/pagination';
import { CreateUomDto } from './dto/create-uom.dto';
import { UomsService } from './uoms.service';
import { Returns } from '../../common/responses';
import { UomResponse } from '../catalog.responses';

@ApiTags('catalog')
@Returns(UomResponse)
@Controller('v1/uoms')
export class UomsController {
  constructor(private readonly uoms: UomsService) {}

  @Get()
  @Permissions('catalog:read')
  @ApiOperation({ summary: 'List units of measure' })
  list(@Query() query: PageQuery) {
    return this.uoms.list(query);
  }

  @Post()
  @Permissions('catalog:write')
  @ApiOperation({ summary: 'Create a unit of measure' })
  async create(@Body() body: CreateUomDto) {
    return { data: await this.uoms.create(body) };
  }
}
