import { Module } from '@nestjs/common';
import { AdjustmentsController } from './adjustments/adjustments.controller';
import { CountSessionsController } from './counts/count-sessions.controller';
import { CountSessionsService } from './counts/count-sessions.service';
import { Allocations } from './ledger/allocations.sql';
import { Counters } from './ledger/counters.sql';
import { DirectPostings } from './ledger/direct.sql';
import { ExpiryJob } from './ledger/expiry-job';
import { Holds } from './ledger/holds.sql';
import { Issues } from './ledger/issues.sql';
import { Journal } from './ledger/journal.sql';
import { LedgerService } from './ledger/ledger.service';
import { Lots } from './ledger/lots.sql';
import { PostingLines } from './ledger/posting-lines';
import { PostingFacts } from './ledger/posting-facts';
import { DirectHolds } from './ledger/direct-holds.sql';
import { Serials } from './ledger/serials.sql';
import { MovesController } from './moves/moves.controller';
import { MovesService } from './moves/moves.service';
import { PoliciesController } from './policies/policies.controller';
import { PoliciesService } from './policies/policies.service';
import { ReservationsController } from './reservations/reservations.controller';
import { ReservationsService } from './reservations/reservations.service';
import { StatusesService } from './stock/statuses.service';
import { StockController } from './stock/stock.controller';
import { StockService } from './stock/stock.service';
import { TransfersController } from './transfers/transfers.controller';
import { TransfersService } from './transfers/transfers.service';

/** The ledger's parts: only the facade (LedgerService) and the Journal's reads leave this module. */
const LEDGER = [LedgerService, DirectPostings, DirectHolds, Counters, Lots, Serials, PostingLines, PostingFacts, Journal, Holds, Allocations, Issues, ExpiryJob];

/** Inventory: the ledger (LedgerService, exported for procurement, sales and production) and its endpoints. */
@Module({
  controllers: [AdjustmentsController, StockController, ReservationsController, TransfersController, CountSessionsController, PoliciesController, MovesController],
  providers: [...LEDGER, StockService, StatusesService, ReservationsService, TransfersService, CountSessionsService, PoliciesService, MovesService],
  exports: [LedgerService],
})
export class InventoryModule {}
