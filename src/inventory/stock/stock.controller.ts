import { Body, Controller, Get, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
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
  balances(@Query() query: BalanceQuery) {
    return this.stock.balances(query);
  }

  @Get('availability')
  @Permissions('inventory:read')
  availability(@Query() query: AvailabilityQuery) {
    return this.stock.availability(query);
  }

  @Get('transactions')
  @Permissions('inventory:read')
  transactions(@Query() query: TransactionQuery) {
    return this.stock.transactions(query);
  }

  @Get('transactions/:id')
  @Permissions('inventory:read')
  async transaction(@UuidParam('id', 'Transaction') id: string) {
    return { data: await this.stock.transaction(id) };
  }

  @Get('lots')
  @Permissions('inventory:read')
  lots(@Query() query: LotQuery) {
    return this.stock.lots(query);
  }

  @Get('serials')
  @Permissions('inventory:read')
  serials(@Query() query: SerialQuery) {
    return this.stock.serials(query);
  }

  @Get('statuses')
  @Permissions('inventory:read')
  listStatuses(@Query() query: PageQuery) {
    return this.statuses.list(query);
  }

  @Post('statuses')
  @Permissions('inventory:write')
  async createStatus(@Body() body: CreateStatusDto) {
    return { data: await this.statuses.create(body) };
  }
}
