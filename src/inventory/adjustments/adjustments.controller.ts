import { Body, Controller, Post } from '@nestjs/common';
import { ApiTags, ApiOperation } from '@nestjs/swagger';
import { Permissions } from '../../auth/decorators';
import { LedgerService } from '../ledger/ledger.service';
import { CreateAdjustmentDto } from './dto/create-adjustment.dto';
import { Returns } from '../../common/responses';
import { TransactionResponse } from '../inventory.responses';

@ApiTags('inventory')
@Returns(TransactionResponse)
@Controller('v1/inventory/adjustments')
export class AdjustmentsController {
  constructor(private readonly ledger: LedgerService) {}

  /** Posts a manual stock adjustment straight to the ledger; 201 with the ledger transaction. */
  @Post()
  @Permissions('inventory:write')
  @ApiOperation({ summary: 'Post a stock adjustment to the ledger' })
  async create(@Body() body: CreateAdjustmentDto) {
    const transaction = await this.ledger.adjust(body);
    return { data: transaction };
  }
}
