import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Permissions } from '../auth/decorators';
import { UuidParam } from '../common/uuid';
import { IfMatch } from '../common/versioning';
import { CompleteWorkOrderDto, CreateWorkOrderDto, WorkOrderQuery } from './production.dto';
import { WorkOrdersService } from './work-orders.service';
import { Returns } from '../common/responses';
import { WorkOrderResponse } from './production.responses';

const SHAPE =
  'A work order is {id, woNo, itemId, bomId, facilityId, qtyPlanned, qtyCompleted, status: draft|released|completed|cancelled, ' +
  'outputLocationId, dueDate, components: [{id, lineNo, itemId, qtyRequired, qtyIssued, reservationId}], transactionId, releasedAt, ' +
  'completedAt, version, createdBy, updatedBy, createdAt, updatedAt}; quantities in base units.';
const ID = 'Work order';

@ApiTags('production')
@Returns(WorkOrderResponse)
@Controller('v1/production/work-orders')
export class WorkOrdersController {
  constructor(private readonly orders: WorkOrdersService) {}

  @Get()
  @Permissions('production:read')
  @ApiOperation({ summary: 'List work orders', description: `Filters status, itemId, facilityId; q: substring of woNo. Newest first. ${SHAPE}` })
  list(@Query() query: WorkOrderQuery) {
    return this.orders.list(query);
  }

  @Get(':id')
  @Permissions('production:read')
  @ApiOperation({ summary: 'One work order', description: SHAPE })
  async get(@UuidParam('id', ID) id: string) {
    return { data: await this.orders.get(id) };
  }

  @Post()
  @Permissions('production:write')
  @ApiOperation({
    summary: 'Create a draft work order',
    description:
      'bomId: an active BOM of the item (default: its active BOM; none → 409 invalid_state). The BOM version is fixed on the order, and ' +
      'each component requires qtyPer × qtyPlanned / outputQty × (1 + scrapFactor), in base units, rounded up to the base unit\'s ' +
      `decimals. woNo WO-000001, … ${SHAPE}`,
  })
  async create(@Body() body: CreateWorkOrderDto) {
    return { data: await this.orders.create(body) };
  }

  @Post(':id/release')
  @HttpCode(200)
  @Permissions('production:write')
  @ApiOperation({
    summary: 'Release a draft work order',
    description: `draft → released: reserves every component at the facility (demandType work_order), all or nothing: 409 insufficient_stock listing every short component. ${SHAPE}`,
  })
  async release(@UuidParam('id', ID) id: string, @IfMatch() ifMatch?: number) {
    return { data: await this.orders.release(id, ifMatch) };
  }

  @Post(':id/complete')
  @HttpCode(200)
  @Permissions('production:write')
  @ApiOperation({
    summary: 'Complete a released work order',
    description:
      'released → completed: one ledger transaction `production` (sourceType work_order) issues each component — its requirement ' +
      'scaled to qtyCompleted / qtyPlanned, rounded up — from its reservation (allocating earliest expiry first where needed) and ' +
      'posts qtyCompleted of the item at the output location (lotNo / expiryDate / serialNos per its tracking); what the component ' +
      `reservations still hold is freed. qtyCompleted defaults to qtyPlanned and may not exceed it. ${SHAPE}`,
  })
  async complete(@UuidParam('id', ID) id: string, @Body() body: CompleteWorkOrderDto, @IfMatch() ifMatch?: number) {
    return { data: await this.orders.complete(id, body, ifMatch) };
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @Permissions('production:write')
  @ApiOperation({ summary: 'Cancel a work order', description: `draft|released → cancelled; its component reservations are cancelled. ${SHAPE}` })
  async cancel(@UuidParam('id', ID) id: string, @IfMatch() ifMatch?: number) {
    return { data: await this.orders.cancel(id, ifMatch) };
  }
}
