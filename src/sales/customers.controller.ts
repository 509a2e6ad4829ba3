import { Body, Controller, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Permissions } from '../auth/decorators';
import { UuidParam } from '../common/uuid';
import { IfMatch } from '../common/versioning';
import { CustomersService } from './customers.service';
import { CreateCustomerDto, CustomerQuery, UpdateCustomerDto } from './sales.dto';
import { Returns } from '../common/responses';
import { CustomerResponse } from './sales.responses';

const SHAPE = 'A customer is {id, code, name, email, phone, address, isActive, version, createdBy, updatedBy, createdAt, updatedAt}.';

@ApiTags('sales')
@Returns(CustomerResponse)
@Controller('v1/sales/customers')
export class CustomersController {
  constructor(private readonly customers: CustomersService) {}

  @Get()
  @Permissions('sales:read')
  @ApiOperation({ summary: 'List customers', description: `Filters isActive; q: substring of code or name. Newest first (createdAt, id). ${SHAPE}` })
  list(@Query() query: CustomerQuery) {
    return this.customers.list(query);
  }

  @Get(':id')
  @Permissions('sales:read')
  @ApiOperation({ summary: 'One customer', description: `404 for an unknown id or another tenant's customer. ${SHAPE}` })
  async get(@UuidParam('id', 'Customer') id: string) {
    return { data: await this.customers.get(id) };
  }

  @Post()
  @Permissions('sales:write')
  @ApiOperation({ summary: 'Create a customer', description: `code unique per tenant (409 duplicate); isActive default true. ${SHAPE}` })
  async create(@Body() body: CreateCustomerDto) {
    return { data: await this.customers.create(body) };
  }

  @Patch(':id')
  @Permissions('sales:write')
  @ApiOperation({
    summary: 'Change a customer',
    description: `Any field; code stays unique (409 duplicate). An inactive customer takes no new sales orders (409); its open ones still ship. ${SHAPE}`,
  })
  async update(@UuidParam('id', 'Customer') id: string, @Body() body: UpdateCustomerDto, @IfMatch() ifMatch?: number) {
    return { data: await this.customers.update(id, body, ifMatch) };
  }
}
