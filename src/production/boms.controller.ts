import { Body, Controller, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Permissions } from '../auth/decorators';
import { UuidParam } from '../common/uuid';
import { IfMatch } from '../common/versioning';
import { BomsService } from './boms.service';
import { BomQuery, CreateBomDto, UpdateBomDto } from './production.dto';
import { Returns } from '../common/responses';
import { BomResponse } from './production.responses';

const SHAPE =
  'A BOM is {id, itemId, versionNo, status: draft|active|obsolete, outputQty, notes, components: [{id, lineNo, itemId, qtyPer, uomId, ' +
  'scrapFactor}], activatedAt, version, createdBy, updatedBy, createdAt, updatedAt}.';
const CYCLE = 'A component that is the output item, or whose active BOM uses the output item at any depth → 409 invalid_state ("cycle").';

@ApiTags('production')
@Returns(BomResponse)
@Controller('v1/production/boms')
export class BomsController {
  constructor(private readonly boms: BomsService) {}

  @Get()
  @Permissions('production:read')
  @ApiOperation({ summary: 'List BOMs', description: `Filters itemId, status. Newest first (createdAt, id). ${SHAPE}` })
  list(@Query() query: BomQuery) {
    return this.boms.list(query);
  }

  @Get(':id')
  @Permissions('production:read')
  @ApiOperation({ summary: 'One BOM with its components', description: SHAPE })
  async get(@UuidParam('id', 'BOM') id: string) {
    return { data: await this.boms.get(id) };
  }

  @Post()
  @Permissions('production:write')
  @ApiOperation({
    summary: 'Create a draft BOM version',
    description: `versionNo is the item's next (1, 2, …). Output and components: active stock items; qtyPer in uomId (default base). ${CYCLE} ${SHAPE}`,
  })
  async create(@Body() body: CreateBomDto) {
    return { data: await this.boms.create(body) };
  }

  @Patch(':id')
  @Permissions('production:write')
  @ApiOperation({ summary: 'Change a draft BOM', description: `Draft only (409 invalid_state). components replaces all. ${CYCLE} ${SHAPE}` })
  async update(@UuidParam('id', 'BOM') id: string, @Body() body: UpdateBomDto, @IfMatch() ifMatch?: number) {
    return { data: await this.boms.update(id, body, ifMatch) };
  }

  @Post(':id/activate')
  @HttpCode(200)
  @Permissions('production:write')
  @ApiOperation({ summary: 'Activate a draft BOM version', description: `draft → active; the item's previously active version becomes obsolete. ${CYCLE} ${SHAPE}` })
  async activate(@UuidParam('id', 'BOM') id: string, @IfMatch() ifMatch?: number) {
    return { data: await this.boms.activate(id, ifMatch) };
  }
}
