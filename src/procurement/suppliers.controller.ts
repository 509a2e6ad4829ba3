import { Body, Controller, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Permissions } from '../auth/decorators';
import { UuidParam } from '../common/uuid';
import { IF_MATCH, IfMatch } from '../common/versioning';
import { CreateSupplierDto, SupplierQuery, UpdateSupplierDto } from './procurement.dto';
import { SuppliersService } from './suppliers.service';
import { Returns } from '../common/responses';
import { SupplierResponse } from './procurement.responses';

const SHAPE = 'A supplier is {id, code, name, email, phone, address, currency, isActive, version, createdBy, updatedBy, createdAt, updatedAt}.';
export { IF_MATCH };

@ApiTags('procurement')
@Returns(SupplierResponse)
@Controller('v1/procurement/suppliers')
export class SuppliersController {
  constructor(private readonly suppliers: SuppliersService) {}

  @Get()
  @Permissions('procurement:read')
  @ApiOperation({ summary: 'List suppliers', description: `Filters isActive; q: substring of code or name. Newest first (createdAt, id). ${SHAPE}` })
  list(@Query() query: SupplierQuery) {
    return this.suppliers.list(query);
  }

  @Get(':id')
  @Permissions('procurement:read')
  @ApiOperation({ summary: 'One supplier', description: SHAPE })
  async get(@UuidParam('id', 'Supplier') id: string) {
    return { data: await this.suppliers.get(id) };
  }

  @Post()
  @Permissions('procurement:write')
  @ApiOperation({ summary: 'Create a supplier', description: `code unique per tenant (409 duplicate); currency default USD. ${SHAPE}` })
  async create(@Body() body: CreateSupplierDto) {
    return { data: await this.suppliers.create(body) };
  }

  @Patch(':id')
  @Permissions('procurement:write')
  @ApiOperation({ summary: 'Change a supplier', description: `Any field. An inactive supplier takes no new purchase orders; its open ones can still be received. ${SHAPE}` })
  async update(@UuidParam('id', 'Supplier') id: string, @Body() body: UpdateSupplierDto, @IfMatch() ifMatch?: number) {
    return { data: await this.suppliers.update(id, body, ifMatch) };
  }
}
