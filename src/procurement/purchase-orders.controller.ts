import { Body, Controller, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Permissions } from '../auth/decorators';
import { UuidParam } from '../common/uuid';
import { IfMatch } from '../common/versioning';
import { CreatePurchaseOrderDto, CreateReceiptDto, PurchaseOrderQuery, UpdatePurchaseOrderDto } from './procurement.dto';
import { GoodsReceiptsService } from './goods-receipts.service';
import { PurchaseOrdersService } from './purchase-orders.service';
import { Returns } from '../common/responses';
import { PurchaseOrderResponse, ReceiptResponse } from './procurement.responses';

const SHAPE =
  'A purchase order is {id, poNo, supplierId, facilityId, status: draft|submitted|approved|sent|partially_received|received|cancelled, ' +
  'currency, orderDate, expectedDate, notes, lines: [{id, lineNo, itemId, qtyOrdered, uomId, unitPrice, qtyReceived}], totalAmount, ' +
  'requisitionId, version, createdBy, updatedBy, createdAt, updatedAt}; qtyOrdered and qtyReceived in the line\'s uomId; ' +
  'totalAmount = Σ qtyOrdered × unitPrice, exact.';
const RECEIPT =
  'A receipt is {id, receiptNo, purchaseOrderId, receivedAt, transactionId, notes, lines: [{lineNo, poLineId, itemId, qty, locationId, ' +
  'lotNo, expiryDate, serialNos, statusId}], createdBy, createdAt}; qty in the order line\'s UOM.';
const ID = 'Purchase order';

@ApiTags('procurement')
@Returns(PurchaseOrderResponse)
@Controller('v1/procurement/purchase-orders')
export class PurchaseOrdersController {
  constructor(
    private readonly orders: PurchaseOrdersService,
    private readonly goodsReceipts: GoodsReceiptsService,
  ) {}

  @Get()
  @Permissions('procurement:read')
  @ApiOperation({ summary: 'List purchase orders', description: `Filters status, supplierId, facilityId; q: substring of poNo or of the supplier's name. Newest first (createdAt, id). ${SHAPE}` })
  list(@Query() query: PurchaseOrderQuery) {
    return this.orders.list(query);
  }

  @Get(':id')
  @Permissions('procurement:read')
  @ApiOperation({ summary: 'One purchase order with its lines', description: SHAPE })
  async get(@UuidParam('id', ID) id: string) {
    return { data: await this.orders.get(id) };
  }

  @Post()
  @Permissions('procurement:write')
  @ApiOperation({
    summary: 'Create a draft purchase order',
    description:
      'supplierId and facilityId must exist (404 naming the field) and be active (409). Lines: an active item of any kind; qtyOrdered ' +
      '(alias qty) in uomId (default the item\'s base UOM, else one of its uomConversions); unitPrice per uomId. currency defaults to the ' +
      `supplier's, orderDate to today (UTC). poNo PO-000001, … ${SHAPE}`,
  })
  async create(@Body() body: CreatePurchaseOrderDto) {
    return { data: await this.orders.create(body) };
  }

  @Patch(':id')
  @Permissions('procurement:write')
  @ApiOperation({ summary: 'Change a draft purchase order', description: `Draft only (else 409 invalid_state). A given lines array replaces all lines. ${SHAPE}` })
  async update(@UuidParam('id', ID) id: string, @Body() body: UpdatePurchaseOrderDto, @IfMatch() ifMatch?: number) {
    return { data: await this.orders.update(id, body, ifMatch) };
  }

  @Post(':id/submit')
  @HttpCode(200)
  @Permissions('procurement:write')
  @ApiOperation({ summary: 'Submit a draft for approval', description: `draft → submitted; needs at least one line (409 invalid_state). ${SHAPE}` })
  async submit(@UuidParam('id', ID) id: string, @IfMatch() ifMatch?: number) {
    return { data: await this.orders.submit(id, ifMatch) };
  }

  @Post(':id/approve')
  @HttpCode(200)
  @Permissions('procurement:approve')
  @ApiOperation({ summary: 'Approve a submitted purchase order', description: `submitted → approved; needs procurement:approve. ${SHAPE}` })
  async approve(@UuidParam('id', ID) id: string, @IfMatch() ifMatch?: number) {
    return { data: await this.orders.approve(id, ifMatch) };
  }

  @Post(':id/send')
  @HttpCode(200)
  @Permissions('procurement:write')
  @ApiOperation({ summary: 'Mark an approved purchase order sent to the supplier', description: `approved → sent. ${SHAPE}` })
  async send(@UuidParam('id', ID) id: string, @IfMatch() ifMatch?: number) {
    return { data: await this.orders.send(id, ifMatch) };
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @Permissions('procurement:write')
  @ApiOperation({ summary: 'Cancel a purchase order', description: `draft|submitted|approved|sent → cancelled (nothing received yet). ${SHAPE}` })
  async cancel(@UuidParam('id', ID) id: string, @IfMatch() ifMatch?: number) {
    return { data: await this.orders.cancel(id, ifMatch) };
  }

  @Returns(ReceiptResponse)
  @Get(':id/receipts')
  @Permissions('procurement:read')
  @ApiOperation({ summary: 'The receipts of a purchase order', description: `Newest first. ${RECEIPT}` })
  receipts(@UuidParam('id', ID) id: string) {
    return this.goodsReceipts.listReceipts(id);
  }

  @Returns(ReceiptResponse)
  @Post(':id/receipts')
  @Permissions('procurement:write')
  @ApiOperation({
    summary: 'Record a goods receipt',
    description:
      'Order approved, sent or partially_received (else 409 invalid_state). One receipt (receiptNo GR-000001, …) and one ledger ' +
      'transaction `receipt` (sourceType receipt, sourceId the receipt) for its stock lines, posted in base units; qtyReceived of the ' +
      'lines grows; the order becomes partially_received, or received when every line is complete. Each line: poLineId of this order ' +
      '(404 naming the field), qty in the line\'s UOM, at most the open quantity (409 over_receipt, nothing posted); stock items need ' +
      'locationId in the order\'s facility (400), and lotNo / expiryDate / serialNos per their tracking; statusId default AVAILABLE ' +
      `(e.g. QUARANTINE). Lines of non-stock and service items post nothing and take no location. ${RECEIPT}`,
  })
  async receive(@UuidParam('id', ID) id: string, @Body() body: CreateReceiptDto, @IfMatch() ifMatch?: number) {
    return { data: await this.goodsReceipts.receive(id, body, ifMatch) };
  }
}
