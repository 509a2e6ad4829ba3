import { Module } from '@nestjs/common';
import { AdjustmentsController } from './adjustments/adjustments.controller';
import { CountSessionsController } from './counts/count-sessions.controller';
import { CountSessionsService } from './counts/count-sessions.service';
import { LedgerService } from './ledger/ledger.service';
import { LedgerReferences } from './ledger/references';
import { UomConversion } from './ledger/uom-conversion';
import { PoliciesController } from './policies/policies.controller';
import { PoliciesService } from './policies/policies.service';
import { ReservationsController } from './reservations/reservations.controller';
import { ReservationsService } from './reservations/reservations.service';
import { StatusesService } from './stock/statuses.service';
import { StockController } from './stock/stock.controller';
import { StockService } from './stock/stock.service';
import { TransfersController } from './transfers/transfers.controller';
import { TransfersService } from './transfers/transfers.service';

/** Inventory: the ledger (LedgerService, exported for procurement, sales and production) and its endpoints. */
@Module({
  controllers: [AdjustmentsController, StockController, ReservationsController, TransfersController, CountSessionsController, PoliciesController],
  providers: [LedgerService, LedgerReferences, StockService, StatusesService, ReservationsService, UomConversion, TransfersService, CountSessionsService, PoliciesService],
  exports: [LedgerService, LedgerReferences, UomConversion],
})
export class InventoryModule {}
