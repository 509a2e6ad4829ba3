import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Permissions } from '../../auth/decorators';
import { UuidParam } from '../../common/uuid';
import { IfMatch } from '../../common/versioning';
import { CountSessionsService } from './count-sessions.service';
import { CountLinesDto, CountSessionQuery, CreateCountSessionDto } from './dto/count-session.dto';
import { Returns } from '../../common/responses';
import { CountSessionResponse } from '../inventory.responses';

const SHAPE =
  'A count session is {id, sessionNo, facilityId, status: open|completed|cancelled, notes, transactionId, completedAt, ' +
  'lines: [{itemId, locationId, lotId, lotNo, countedQty, systemQty, varianceQty}], version, createdBy, updatedBy, createdAt, updatedAt}; ' +
  'lines ordered by item number, location path, lot number; systemQty and varianceQty are null until completion; quantities in base units.';
const SESSION = 'Count session';

@ApiTags('inventory')
@Returns(CountSessionResponse)
@Controller('v1/inventory/count-sessions')
export class CountSessionsController {
  constructor(private readonly sessions: CountSessionsService) {}

  @Get()
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'List count sessions', description: `q: substring of sessionNo. Newest first (createdAt, id). ${SHAPE}` })
  list(@Query() query: CountSessionQuery) {
    return this.sessions.list(query);
  }

  @Get(':id')
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'One count session', description: SHAPE })
  async get(@UuidParam('id', SESSION) id: string) {
    return { data: await this.sessions.get(id) };
  }

  @Post()
  @Permissions('inventory:write')
  @ApiOperation({ summary: 'Open a count session for a facility', description: `sessionNo CS-000001, … ${SHAPE}` })
  async create(@Body() body: CreateCountSessionDto) {
    return { data: await this.sessions.create(body) };
  }

  @Post(':id/lines')
  @HttpCode(200)
  @Permissions('inventory:write')
  @ApiOperation({
    summary: 'Record counts',
    description:
      "Open sessions only. Each line: a location of the session's facility (400), a stock item that is not serial-tracked (400: " +
      'serials are corrected with adjustments), lotNo exactly for lot-tracked items (400), countedQty >= 0 in base units. ' +
      'A later count of the same (itemId, locationId, lotNo) replaces the earlier one. ' + SHAPE,
  })
  async addLines(@UuidParam('id', SESSION) id: string, @Body() body: CountLinesDto, @IfMatch() ifMatch?: number) {
    return { data: await this.sessions.addLines(id, body, ifMatch) };
  }

  @Post(':id/complete')
  @HttpCode(200)
  @Permissions('inventory:write')
  @ApiOperation({
    summary: 'Complete a count session',
    description:
      'open → completed. For each counted (item, location, lot): systemQty = on hand in the AVAILABLE status at completion ' +
      '(0 if none), varianceQty = countedQty − systemQty. Posts one ledger transaction `count` (sourceType count_session) with a ' +
      'line per non-zero variance in the AVAILABLE status (a new lot number is created on a positive variance) and stores its id ' +
      'as transactionId; when every variance is 0 nothing is posted and transactionId is null. A session without lines → 409 ' +
      'invalid_state. A negative variance below allocated or held stock → 409 insufficient_stock and the session stays open. ' + SHAPE,
  })
  async complete(@UuidParam('id', SESSION) id: string, @IfMatch() ifMatch?: number) {
    return { data: await this.sessions.complete(id, ifMatch) };
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @Permissions('inventory:write')
  @ApiOperation({ summary: 'Cancel an open count session', description: `open → cancelled; nothing is posted. ${SHAPE}` })
  async cancel(@UuidParam('id', SESSION) id: string, @IfMatch() ifMatch?: number) {
    return { data: await this.sessions.cancel(id, ifMatch) };
  }
}
