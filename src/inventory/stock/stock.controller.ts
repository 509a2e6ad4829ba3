import { Body, Controller, Get, Post, Query } from '@nestjs/common';
import { ApiTags, ApiOperation } from '@nestjs/swagger';
import { Permissions } from '../../auth/decorators';
import { PageQuery } from '../../common/pagination';
import { UuidParam } from '../../common/uuid';
import { AvailabilityQuery, BalanceQuery, LotQuery, SerialQuery, TransactionQuery } from './dto/stock-queries.dto';
import { CreateStatusDto } from './dto/create-status.dto';
import { StatusesService } from './statuses.service';
import { StockService } from './stock.service';
import { Returns } from '../../common/responses';
import { AvailabilityResponse, BalanceResponse, LotResponse, SerialResponse, StockStatusResponse, TransactionResponse } from '../inventory.responses';

@ApiTags('inventory')
@Controller('v1/inventory')
export class StockController {
  constructor(
    private readonly stock: StockService,
    private readonly statuses: StatusesService,
  ) {}

  @Returns(BalanceResponse)
  @Get('balances')
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'Stock balances by item, location, lot and status' })
  balances(@Query() query: BalanceQuery) {
    return this.stock.balances(query);
  }

  @Returns(AvailabilityResponse)
  @Get('availability')
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'Availability: on hand, allocated, reserved and available to promise' })
  availability(@Query() query: AvailabilityQuery) {
    return this.stock.availability(query);
  }

  @Returns(TransactionResponse)
  @Get('transactions')
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'List ledger transactions with their lines' })
  transactions(@Query() query: TransactionQuery) {
    return this.stock.transactions(query);
  }

  @Returns(TransactionResponse)
  @Get('transactions/:id')
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'One ledger transaction with its lines' })
  async transaction(@UuidParam('id', 'Transaction') id: string) {
    return { data: await this.stock.transaction(id) };
  }

  @Returns(LotResponse)
  @Get('lots')
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'List lots' })
  lots(@Query() query: LotQuery) {
    return this.stock.lots(query);
  }

  @Returns(SerialResponse)
  @Get('serials')
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'List serial numbers and where they are' })
  serials(@Query() query: SerialQuery) {
    return this.stock.serials(query);
  }

  @Returns(StockStatusResponse)
  @Get('statuses')
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'List stock statuses' })
  listStatuses(@Query() query: PageQuery) {
    return this.statuses.list(query);
  }

  @Returns(StockStatusResponse)
  @Post('statuses')
  @Permissions('inventory:write')
  @ApiOperation({ summary: 'Create a stock status' })
  async createStatus(@Body() body: CreateStatusDto) {
    return { data: await this.statuses.create(body) };
  }
}
