import { Global, Module } from '@nestjs/common';
import { InventoryModule } from '../inventory/inventory.module';
import { INCOMING_SUPPLY } from '../inventory/policies/incoming-supply';
import { GoodsReceiptsService } from './goods-receipts.service';
import { OpenPurchaseQuantity } from './open-purchase-quantity.sql';
import { PurchaseOrdersController } from './purchase-orders.controller';
import { PurchaseOrdersService } from './purchase-orders.service';
import { RequisitionsController } from './requisitions.controller';
import { RequisitionsService } from './requisitions.service';
import { SuppliersController } from './suppliers.controller';
import { SuppliersService } from './suppliers.service';

/**
 * Procurement: suppliers, purchase orders with goods receipts (stock in through LedgerService),
 * requisitions. Global only to hand inventory's reorder suggestions the open purchase-order quantity
 * (INCOMING_SUPPLY) without inventory importing procurement.
 */
@Global()
@Module({
  imports: [InventoryModule],
  controllers: [SuppliersController, PurchaseOrdersController, RequisitionsController],
  providers: [SuppliersService, PurchaseOrdersService, GoodsReceiptsService, RequisitionsService, { provide: INCOMING_SUPPLY, useClass: OpenPurchaseQuantity }],
  exports: [INCOMING_SUPPLY],
})
export class ProcurementModule {}
