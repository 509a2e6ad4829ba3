import { Body, Controller, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Permissions } from '../../auth/decorators';
import { UuidParam } from '../../common/uuid';
import { IfMatch } from '../../common/versioning';
import { CreateTransferDto, TransferQuery, UpdateTransferDto } from './dto/transfer.dto';
import { TransfersService } from './transfers.service';
import { Returns } from '../../common/responses';
import { TransferResponse } from '../inventory.responses';

const SHAPE =
  'A transfer order is {id, transferNo, fromFacilityId, toFacilityId, status: draft|shipped|received|cancelled, notes, ' +
  'lines: [{id, lineNo, itemId, qty, fromLocationId, toLocationId, lotId, qtyShipped, qtyReceived}], shippedAt, receivedAt, ' +
  'version, createdBy, updatedBy, createdAt, updatedAt}; quantities in the item\'s base unit.';

@ApiTags('inventory')
@Returns(TransferResponse)
@Controller('v1/inventory/transfers')
export class TransfersController {
  constructor(private readonly transfers: TransfersService) {}

  @Get()
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'List transfer orders', description: `q: substring of transferNo. Newest first (createdAt, id). ${SHAPE}` })
  list(@Query() query: TransferQuery) {
    return this.transfers.list(query);
  }

  @Get(':id')
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'One transfer order', description: SHAPE })
  async get(@UuidParam('id', 'Transfer order') id: string) {
    return { data: await this.transfers.get(id) };
  }

  @Post()
  @Permissions('inventory:write')
  @ApiOperation({
    summary: 'Create a draft transfer order',
    description:
      'Facilities must differ (400) and exist (404 naming the field). Each line: a stock, active item; fromLocationId in the ' +
      'from facility and toLocationId in the to facility (400); qty in uomId (default the base UOM), converted to base units ' +
      'and rounded up to the base UOM decimals; lotId required exactly for lot-tracked items. transferNo TO-000001, … ' + SHAPE,
  })
  async create(@Body() body: CreateTransferDto) {
    return { data: await this.transfers.create(body) };
  }

  @Patch(':id')
  @Permissions('inventory:write')
  @ApiOperation({ summary: 'Change a draft transfer order', description: `Draft only (else 409 invalid_state). notes and/or lines (replace all lines). ${SHAPE}` })
  async update(@UuidParam('id', 'Transfer order') id: string, @Body() body: UpdateTransferDto, @IfMatch() ifMatch?: number) {
    return { data: await this.transfers.update(id, body, ifMatch) };
  }

  @Post(':id/ship')
  @HttpCode(200)
  @Permissions('inventory:write')
  @ApiOperation({
    summary: 'Ship a draft transfer order',
    description:
      'draft → shipped: posts one ledger transaction `transfer_out` (sourceType transfer_order, sourceId the transfer) taking ' +
      'each line from its from location (Available status); qtyShipped = qty. Not enough stock → 409 insufficient_stock and ' +
      'nothing changes. Serial-tracked lines without serialNos ship the serials in stock at the location (lowest serial numbers first). ' + SHAPE,
  })
  async ship(@UuidParam('id', 'Transfer order') id: string, @IfMatch() ifMatch?: number) {
    return { data: await this.transfers.ship(id, ifMatch) };
  }

  @Post(':id/receive')
  @HttpCode(200)
  @Permissions('inventory:write')
  @ApiOperation({
    summary: 'Receive a shipped transfer order',
    description: 'shipped → received: posts one `transfer_in` putting each line at its to location (Available status); qtyReceived = qtyShipped. ' + SHAPE,
  })
  async receive(@UuidParam('id', 'Transfer order') id: string, @IfMatch() ifMatch?: number) {
    return { data: await this.transfers.receive(id, ifMatch) };
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @Permissions('inventory:write')
  @ApiOperation({ summary: 'Cancel a draft transfer order', description: `draft → cancelled; nothing is posted. ${SHAPE}` })
  async cancel(@UuidParam('id', 'Transfer order') id: string, @IfMatch() ifMatch?: number) {
    return { data: await this.transfers.cancel(id, ifMatch) };
  }
}
