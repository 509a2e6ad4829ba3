import { Body, Controller, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Permissions } from '../../auth/decorators';
import { UuidParam } from '../../common/uuid';
import { IfMatch } from '../../common/versioning';
import { CreateItemDto } from './dto/create-item.dto';
import { ItemQuery } from './dto/item-query.dto';
import { UpdateItemDto } from './dto/update-item.dto';
import { ItemsService } from './items.service';
import { Returns } from '../../common/responses';
import { ItemResponse } from '../catalog.responses';

const ITEM_SHAPE =
  'An item is {id, itemNo, name, description, itemKind, baseUomId, lotTracking, serialTracking, expiryTracking, isActive, ' +
  'identifiers[{type, value}] (ordered by type, value), attributes[{name, value}] (ordered by name), ' +
  'uomConversions[{uomId, factor}] (ordered by factor; 1 uomId = factor base units), version, createdAt, updatedAt}.';

@ApiTags('catalog')
@Returns(ItemResponse)
@Controller('v1/items')
export class ItemsController {
  constructor(private readonly items: ItemsService) {}

  @Get()
  @Permissions('catalog:read')
  @ApiOperation({
    summary: 'List items',
    description: `q: case-insensitive substring of name or itemNo (a literal, % and _ included). Newest first (createdAt, id). ${ITEM_SHAPE}`,
  })
  list(@Query() query: ItemQuery) {
    return this.items.list(query);
  }

  @Get(':id')
  @Permissions('catalog:read')
  @ApiOperation({ summary: 'One item with its identifiers, attributes and UOM conversions', description: ITEM_SHAPE })
  async get(@UuidParam('id', 'Item') id: string) {
    return { data: await this.items.get(id) };
  }

  @Post()
  @Permissions('catalog:write')
  @ApiOperation({
    summary: 'Create an item',
    description: `Unknown baseUomId or uomConversions[i].uomId → 404 naming the field; duplicate itemNo or identifier → 409 duplicate. ${ITEM_SHAPE}`,
  })
  async create(@Body() body: CreateItemDto) {
    return { data: await this.items.create(body) };
  }

  @Patch(':id')
  @Permissions('catalog:write')
  @ApiHeader({ name: 'If-Match', required: false, description: 'expected version, e.g. "3" → 412 version_conflict if it moved on' })
  @ApiOperation({
    summary: 'Update an item',
    description:
      'Any create field; a given identifiers, attributes or uomConversions array replaces the whole list. ' +
      'itemNo, baseUomId, lotTracking, serialTracking and expiryTracking cannot change once the item has ledger lines ' +
      '(409 invalid_state): posted quantities and lots depend on them.',
  })
  async update(@UuidParam('id', 'Item') id: string, @Body() body: UpdateItemDto, @IfMatch() ifMatch: number | undefined) {
    return { data: await this.items.update(id, body, ifMatch) };
  }
}
