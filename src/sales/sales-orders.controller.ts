import { Body, Controller, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Permissions } from '../auth/decorators';
import { UuidParam } from '../common/uuid';
import { IfMatch } from '../common/versioning';
import { CreateSalesOrderDto, SalesOrderQuery, ShipSalesOrderDto, UpdateSalesOrderDto } from './sales.dto';
import { SalesOrdersService } from './sales-orders.service';
import { Returns } from '../common/responses';
import { SalesOrderResponse } from './sales.responses';

// The fields are the SalesOrderResponse schema's; this says what they mean.
const SHAPE =
  'Status draft|open|partially_shipped|shipped|cancelled; qty and qtyShipped in the line\'s uomId; reservationId: the stock line\'s hold ' +
  'from open on (null for non_stock and service lines, and before open); totalAmount = Σ qty × unitPrice, exact.';
const ID = 'Sales order';

@ApiTags('sales')
@Returns(SalesOrderResponse)
@Controller('v1/sales/orders')
export class SalesOrdersController {
  constructor(private readonly orders: SalesOrdersService) {}

  @Get()
  @Permissions('sales:read')
  @ApiOperation({ summary: 'List sales orders', description: `Filters status, customerId, facilityId; q: substring of orderNo or of the customer's name. Newest first (createdAt, id). ${SHAPE}` })
  list(@Query() query: SalesOrderQuery) {
    return this.orders.list(query);
  }

  @Get(':id')
  @Permissions('sales:read')
  @ApiOperation({ summary: 'One sales order with its lines', description: SHAPE })
  async get(@UuidParam('id', ID) id: string) {
    return { data: await this.orders.get(id) };
  }

  @Post()
  @Permissions('sales:write')
  @ApiOperation({
    summary: 'Create a draft sales order',
    description:
      'customerId and facilityId must exist (404 naming the field) and be active (409 invalid_state). Lines (numbered lineNo 1..n): an ' +
      'active item of any kind (stock, non_stock, service; unknown 404, inactive 409); qty in uomId (default the item\'s base UOM, else one ' +
      `of its uomConversions; 400 otherwise or for too many decimals); unitPrice per uomId. orderNo SO-000001, … ${SHAPE}`,
  })
  async create(@Body() body: CreateSalesOrderDto) {
    return { data: await this.orders.create(body) };
  }

  @Patch(':id')
  @Permissions('sales:write')
  @ApiOperation({ summary: 'Change a draft sales order', description: `Draft only (else 409 invalid_state naming the state). A given lines array replaces all lines; same rules as create. ${SHAPE}` })
  async update(@UuidParam('id', ID) id: string, @Body() body: UpdateSalesOrderDto, @IfMatch() ifMatch?: number) {
    return { data: await this.orders.update(id, body, ifMatch) };
  }

  @Post(':id/open')
  @HttpCode(200)
  @Permissions('sales:write')
  @ApiOperation({
    summary: 'Open a draft: reserve its stock lines',
    description:
      'draft → open. Needs at least one line (409 invalid_state); the customer, facility and every item must still be active (409). One ' +
      'reservation per stock line at the order\'s facility, in base units (demandType sales_order, demandId the order, demandLineId the ' +
      'line), its id on the line. All or nothing: if the facility\'s available-to-promise cannot cover every stock line, 409 ' +
      'insufficient_stock whose details name every short line ({field: lines[i], lineId, lineNo, itemId, itemNo, facilityId, requested, ' +
      `available}, in base units), nothing is reserved and the order stays draft. non_stock and service lines are never reserved. ${SHAPE}`,
  })
  async open(@UuidParam('id', ID) id: string, @IfMatch() ifMatch?: number) {
    return { data: await this.orders.open(id, ifMatch) };
  }

  @Post(':id/ship')
  @HttpCode(200)
  @Permissions('sales:write')
  @ApiOperation({
    summary: 'Ship an open sales order',
    description:
      'open|partially_shipped (else 409 invalid_state). Body {lines?: [{lineId, qty, locationId?, lotId?, serialNos?}]}, qty in the line\'s ' +
      'UOM; absent or empty ships everything outstanding on every line. A lineId not of this order → 404 naming the field; more than a ' +
      'line\'s outstanding quantity → 409 invalid_state naming the line (nothing posted). Stock lines ship from their reservation\'s ' +
      'allocations: where these do not cover the quantity, the hold is allocated first — at locationId (and lotId) when given, else its whole ' +
      'unallocated rest automatically, earliest expiry first. One `shipment` ledger transaction (sourceType sales_order, sourceId the order) ' +
      'for the whole call, in base units; the reservations count it as fulfilled (status fulfilled when complete). locationId, lotId and ' +
      'serialNos are refused on non_stock and service lines (400), which just count as shipped, and serialNos on items that are not ' +
      'serial-tracked (null and an empty serialNos are taken as absent). The order becomes shipped when every line ' +
      `is fully shipped, else partially_shipped. An open order still ships after its customer, items or facility were deactivated. ${SHAPE}`,
  })
  async ship(@UuidParam('id', ID) id: string, @Body() body: ShipSalesOrderDto, @IfMatch() ifMatch?: number) {
    return { data: await this.orders.ship(id, body, ifMatch) };
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @Permissions('sales:write')
  @ApiOperation({
    summary: 'Cancel a sales order',
    description: `draft|open|partially_shipped → cancelled (else 409 invalid_state). Every line reservation still holding stock is cancelled; what shipped stays shipped. ${SHAPE}`,
  })
  async cancel(@UuidParam('id', ID) id: string, @IfMatch() ifMatch?: number) {
    return { data: await this.orders.cancel(id, ifMatch) };
  }
}
