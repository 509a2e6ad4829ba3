import { Module } from '@nestjs/common';
import { InventoryModule } from '../inventory/inventory.module';
import { BomsController } from './boms.controller';
import { BomsService } from './boms.service';
import { WorkOrdersController } from './work-orders.controller';
import { WorkOrdersService } from './work-orders.service';

/** Production: versioned BOMs and work orders that reserve, issue and post through LedgerService. */
@Module({
  imports: [InventoryModule],
  controllers: [BomsController, WorkOrdersController],
  providers: [BomsService, WorkOrdersService],
})
export class ProductionModule {}
