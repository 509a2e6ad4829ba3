import { Body, Controller, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Permissions } from '../../auth/decorators';
import { UuidParam } from '../../common/uuid';
import { IfMatch } from '../../common/versioning';
import { CreatePolicyDto, PolicyQuery, UpdatePolicyDto } from './dto/policy.dto';
import { PoliciesService } from './policies.service';
import { Returns } from '../../common/responses';
import { PolicyResponse, SuggestionResponse } from '../inventory.responses';

const SHAPE =
  'A reorder policy is {id, itemId, facilityId, minQty, maxQty, safetyStock, reorderQty, leadTimeDays, isActive, version, ' +
  'createdAt, updatedAt}; quantities in the item\'s base unit.';
const POLICY = 'Reorder policy';

@ApiTags('inventory')
@Returns(PolicyResponse)
@Controller('v1/inventory/policies')
export class PoliciesController {
  constructor(private readonly policies: PoliciesService) {}

  @Get()
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'List reorder policies', description: `q: substring of the item's number or name. Newest first (createdAt, id). ${SHAPE}` })
  list(@Query() query: PolicyQuery) {
    return this.policies.list(query);
  }

  // Declared before ':id', which would otherwise take "suggestions" as an id.
  @Returns(SuggestionResponse)
  @Get('suggestions')
  @Permissions('inventory:read')
  @ApiOperation({
    summary: 'Reorder suggestions',
    description:
      'One row {itemId, facilityId, projectedQty, suggestedQty} per ACTIVE policy whose projectedQty < minQty + safetyStock, ' +
      'newest policy first; filters itemId, facilityId. projectedQty = on hand in Available statuses − open unallocated reserved ' +
      '− allocated at the facility + open purchase-order quantity. Purchase orders do not exist in this service yet, so the ' +
      'open purchase-order term is 0 for now. suggestedQty = maxQty − projectedQty, rounded up to a multiple of reorderQty ' +
      'when reorderQty > 0; never below 0 (possible when minQty + safetyStock > maxQty).',
  })
  suggestions(@Query() query: PolicyQuery) {
    return this.policies.suggestions(query);
  }

  @Get(':id')
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'One reorder policy', description: SHAPE })
  async get(@UuidParam('id', POLICY) id: string) {
    return { data: await this.policies.get(id) };
  }

  @Post()
  @Permissions('inventory:write')
  @ApiOperation({
    summary: 'Create a reorder policy',
    description:
      'One per (item, facility) → else 409 duplicate. minQty > maxQty → 400. Unknown item or facility → 404; a non-stock item → 400. ' + SHAPE,
  })
  async create(@Body() body: CreatePolicyDto) {
    return { data: await this.policies.create(body) };
  }

  @Patch(':id')
  @Permissions('inventory:write')
  @ApiHeader({ name: 'If-Match', required: false, description: 'expected version, e.g. "3" → 412 version_conflict if it moved on' })
  @ApiOperation({ summary: 'Change a reorder policy', description: `Any field but itemId and facilityId; minQty <= maxQty is checked on the merged values. ${SHAPE}` })
  async update(@UuidParam('id', POLICY) id: string, @Body() body: UpdatePolicyDto, @IfMatch() ifMatch?: number) {
    return { data: await this.policies.update(id, body, ifMatch) };
  }
}
