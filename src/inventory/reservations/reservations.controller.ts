import { Body, Controller, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import { ApiTags, ApiOperation } from '@nestjs/swagger';
import { Permissions } from '../../auth/decorators';
import { toDate } from '../../common/dates';
import { UuidParam } from '../../common/uuid';
import { IfMatch } from '../../common/versioning';
import { LedgerService } from '../ledger/ledger.service';
import { AllocateDto, AllocationQuery, CreateReservationDto, ReservationQuery, UpdateReservationDto } from './dto/reservation.dto';
import { ReservationsService } from './reservations.service';
import { Returns } from '../../common/responses';
import { AllocationResponse, ReservationResponse } from '../inventory.responses';

@ApiTags('inventory')
@Returns(ReservationResponse)
@Controller('v1/inventory')
export class ReservationsController {
  constructor(
    private readonly reservations: ReservationsService,
    private readonly ledger: LedgerService,
  ) {}

  @Get('reservations')
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'List reservations' })
  list(@Query() query: ReservationQuery) {
    return this.reservations.list(query);
  }

  @Get('reservations/:id')
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'One reservation with its allocations' })
  async get(@UuidParam('id', 'Reservation') id: string) {
    return { data: await this.reservations.get(id) };
  }

  /** A soft hold against a demand document; 409 insufficient_stock beyond the facility's available-to-promise. */
  @Post('reservations')
  @Permissions('inventory:write')
  @ApiOperation({ summary: 'Reserve stock at a facility', description: 'With a demandType other than manual, demandId must name an existing document of that type (400 when missing, 404 when unknown).' })
  async create(@Body() body: CreateReservationDto) {
    await this.reservations.checkDemand(body.demandType, body.demandId);
    return { data: await this.ledger.reserve({ ...body, expiresAt: toDate(body.expiresAt) }) };
  }

  @Patch('reservations/:id')
  @Permissions('inventory:write')
  @ApiOperation({ summary: 'Change an open reservation (quantity, expiry, notes)', description: 'A reservation that a sales order or work order made for itself is changed only through that document: 409 invalid_state naming it.' })
  async update(@UuidParam('id', 'Reservation') id: string, @Body() body: UpdateReservationDto, @IfMatch() ifMatch?: number) {
    await this.reservations.assertNotOwned(id, 'change');
    return { data: await this.ledger.updateReservation(id, { ...body, expiresAt: toDate(body.expiresAt) }, ifMatch) };
  }

  @Post('reservations/:id/allocate')
  @HttpCode(200)
  @Permissions('inventory:write')
  @ApiOperation({ summary: 'Allocate a reservation to balances (given pins, or earliest expiry first)' })
  async allocate(@UuidParam('id', 'Reservation') id: string, @Body() body: AllocateDto, @IfMatch() ifMatch?: number) {
    return { data: await this.ledger.allocate(id, body.allocations, ifMatch) };
  }

  @Post('reservations/:id/release')
  @HttpCode(200)
  @Permissions('inventory:write')
  @ApiOperation({ summary: 'Release a reservation: everything it holds is freed', description: 'A reservation that a sales order or work order made for itself is changed only through that document: 409 invalid_state naming it.' })
  async release(@UuidParam('id', 'Reservation') id: string, @IfMatch() ifMatch?: number) {
    await this.reservations.assertNotOwned(id, 'release');
    return { data: await this.ledger.release(id, 'released', ifMatch) };
  }

  @Post('reservations/:id/cancel')
  @HttpCode(200)
  @Permissions('inventory:write')
  @ApiOperation({ summary: 'Cancel a reservation: everything it holds is freed', description: 'A reservation that a sales order or work order made for itself is changed only through that document: 409 invalid_state naming it.' })
  async cancel(@UuidParam('id', 'Reservation') id: string, @IfMatch() ifMatch?: number) {
    await this.reservations.assertNotOwned(id, 'cancel');
    return { data: await this.ledger.release(id, 'cancelled', ifMatch) };
  }

  /** Allocated only: issues the allocated stock (ledger `fulfillment`) and closes the reservation. */
  @Post('reservations/:id/fulfill')
  @HttpCode(200)
  @Permissions('inventory:write')
  @ApiOperation({ summary: 'Fulfil a reservation: issue its allocated stock in one ledger transaction', description: 'A reservation that a sales order or work order made for itself is changed only through that document: 409 invalid_state naming it.' })
  async fulfill(@UuidParam('id', 'Reservation') id: string, @IfMatch() ifMatch?: number) {
    await this.reservations.assertNotOwned(id, 'fulfill');
    return { data: await this.ledger.fulfill(id, ifMatch) };
  }

  @Returns(AllocationResponse)
  @Get('allocations')
  @Permissions('inventory:read')
  @ApiOperation({ summary: 'List allocations' })
  allocations(@Query() query: AllocationQuery) {
    return this.reservations.allocations(query);
  }
}
