import { Body, Controller, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Permissions } from '../../auth/decorators';
import { Returns } from '../../common/responses';
import { TransactionResponse } from '../inventory.responses';
import { CreateMoveDto } from './dto/move.dto';
import { MovesService } from './moves.service';

@ApiTags('inventory')
@Returns(TransactionResponse)
@Controller('v1/inventory/moves')
export class MovesController {
  constructor(private readonly moves: MovesService) {}

  @Post()
  @Permissions('inventory:write')
  @ApiOperation({
    summary: 'Move stock between locations or statuses inside a facility',
    description:
      '201 with one ledger transaction of type `move` (sourceType `move`): per request line a −qty line at (fromLocationId, fromStatusId) ' +
      'and a +qty line at (toLocationId, toStatusId), numbered in order; all lines or nothing. Defaults: toLocationId = fromLocationId, ' +
      'fromStatusId = AVAILABLE, toStatusId = fromStatusId; a line must change its location or its status, and both locations must be of one ' +
      'facility (between facilities, use transfers), else 400 validation_failed naming the field. Only unallocated stock moves: qty ≤ the source ' +
      "balance's qtyOnHand − qtyAllocated as the lines apply, in their order — a line may move on what an earlier line of the same move brought " +
      'to its source, never what a later line brings, so lines that cancel each other out are held to it too —, and a move out of an Available ' +
      "status into one that is not must leave the facility's allocations and reservations covered once all its lines apply, else 409 " +
      'insufficient_stock naming the line. A balance whose lines cancel out is left as it is (no stock.changed event for it). Lots are kept (lotNo required for lot-tracked items); serial-tracked ' +
      'items name serialNos (one per unit, in stock at the source location and status), and those serials move. Inactive item, facility or ' +
      'target location → 409 invalid_state; an inactive source location may be emptied. Quarantine release is a status move (QUARANTINE → AVAILABLE).',
  })
  async create(@Body() body: CreateMoveDto) {
    return { data: await this.moves.move(body) };
  }
}
