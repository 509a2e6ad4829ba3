import { Body, Controller, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Permissions } from '../auth/decorators';
import { UuidParam } from '../common/uuid';
import { IfMatch } from '../common/versioning';
import { CreateRequisitionDto, RequisitionQuery, UpdateRequisitionDto } from './procurement.dto';
import { RequisitionsService } from './requisitions.service';
import { Returns } from '../common/responses';
import { RequisitionResponse } from './procurement.responses';

const SHAPE =
  'A requisition is {id, reqNo, facilityId, status: draft|submitted|approved|ordered, neededBy, notes, lines: [{id, lineNo, itemId, qty, ' +
  'uomId, supplierId}], purchaseOrderIds, version, createdBy, updatedBy, createdAt, updatedAt}.';
const ID = 'Requisition';

@ApiTags('procurement')
@Returns(RequisitionResponse)
@Controller('v1/procurement/requisitions')
export class RequisitionsController {
  constructor(private readonly requisitions: RequisitionsService) {}

  @Get()
  @Permissions('procurement:read')
  @ApiOperation({ summary: 'List requisitions', description: `Filters status, facilityId; q: substring of reqNo. Newest first. ${SHAPE}` })
  list(@Query() query: RequisitionQuery) {
    return this.requisitions.list(query);
  }

  @Get(':id')
  @Permissions('procurement:read')
  @ApiOperation({ summary: 'One requisition', description: SHAPE })
  async get(@UuidParam('id', ID) id: string) {
    return { data: await this.requisitions.get(id) };
  }

  @Post()
  @Permissions('procurement:write')
  @ApiOperation({ summary: 'Create a draft requisition', description: `An active facility; lines of active items, qty in uomId (default base), optional active supplier. reqNo RQ-000001, … ${SHAPE}` })
  async create(@Body() body: CreateRequisitionDto) {
    return { data: await this.requisitions.create(body) };
  }

  @Patch(':id')
  @Permissions('procurement:write')
  @ApiOperation({ summary: 'Change a draft requisition', description: `Draft only (409 invalid_state). A given lines array replaces all lines. ${SHAPE}` })
  async update(@UuidParam('id', ID) id: string, @Body() body: UpdateRequisitionDto, @IfMatch() ifMatch?: number) {
    return { data: await this.requisitions.update(id, body, ifMatch) };
  }

  @Post(':id/submit')
  @HttpCode(200)
  @Permissions('procurement:write')
  @ApiOperation({ summary: 'Submit a draft requisition', description: `draft → submitted; needs a line (409). ${SHAPE}` })
  async submit(@UuidParam('id', ID) id: string, @IfMatch() ifMatch?: number) {
    return { data: await this.requisitions.submit(id, ifMatch) };
  }

  @Post(':id/approve')
  @HttpCode(200)
  @Permissions('procurement:approve')
  @ApiOperation({ summary: 'Approve a submitted requisition', description: `submitted → approved; needs procurement:approve. ${SHAPE}` })
  async approve(@UuidParam('id', ID) id: string, @IfMatch() ifMatch?: number) {
    return { data: await this.requisitions.approve(id, ifMatch) };
  }

  @Post(':id/convert')
  @HttpCode(200)
  @Permissions('procurement:write')
  @ApiOperation({
    summary: 'Convert an approved requisition into draft purchase orders',
    description:
      'approved → ordered (else 409 invalid_state; converting twice is 409). One draft purchase order per supplier of the lines, for the ' +
      'requisition\'s facility, in the supplier\'s currency, copying item, qty and UOM with unitPrice 0; purchaseOrderIds lists them. ' +
      `A line without a supplier → 400 and nothing is created. ${SHAPE}`,
  })
  async convert(@UuidParam('id', ID) id: string, @IfMatch() ifMatch?: number) {
    return { data: await this.requisitions.convert(id, ifMatch) };
  }
}
