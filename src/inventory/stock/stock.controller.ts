import { Body, Controller, Get, Post, Query } from '@nestjs/common';
import { ApiTags, ApiOperation } from '@nestjs/swagger';
import { Permissions } from '../../auth/decorators';
import { PageQuery } from '../../common/pagination';
import { UuidParam } from '../../common/uuid';
import { AvailabilityQuery, BalanceQuery, LotQuery, SerialQuery, TransactionQuery } from './dto/stock-queries.dto';
import { CreateStatusDto } from './dto/create-status.dto';
import { StatusesService } from './statuses.service';
import { StockService } from './stock.service';

@ApiTags('inventory')
@Controller('v1/inventory')
export class StockController {
  constructor(
    private readonly stock: StockService,
    private readonly statuses: StatusesService,
  ) {}

  @Get('balances')
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'Stock balances by item, location, lot and status' })
  balances(@Query() query: BalanceQuery) {
    return this.stock.balances(query);
  }

  @Get('availability')
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'Availability: on hand, allocated, reserved and available to promise' })
  availability(@Query() query: AvailabilityQuery) {
    return this.stock.availability(query);
  }

  @Get('transactions')
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'List ledger transactions with their lines' })
  transactions(@Query() query: TransactionQuery) {
    return this.stock.transactions(query);
  }

  @Get('transactions/:id')
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'One ledger transaction with its lines' })
  async transaction(@UuidParam('id', 'Transaction') id: string) {
    return { data: await this.stock.transaction(id) };
  }

  @Get('lots')
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'List lots' })
  lots(@Query() query: LotQuery) {
    return this.stock.lots(query);
  }

  @Get('serials')
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'List serial numbers and where they are' })
  serials(@Query() query: SerialQuery) {
    return this.stock.serials(query);
  }

  @Get('statuses')
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'List stock statuses' })
  listStatuses(@Query() query: PageQuery) {
    return this.statuses.list(query);
  }

  @Post('statuses')
  @Permissions('inventory:write')
  @ApiOperation({ summary: 'Create a stock status' })
  async createStatus(@Body() body: CreateStatusDto) {
    return { data: await this.statuses.create(body) };
  }
}
