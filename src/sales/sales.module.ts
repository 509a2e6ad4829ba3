import { Module } from '@nestjs/common';
import { InventoryModule } from '../inventory/inventory.module';
import { CustomersController } from './customers.controller';
import { CustomersService } from './customers.service';
import { SalesOrdersController } from './sales-orders.controller';
import { SalesOrdersService } from './sales-orders.service';
import { SalesShipping } from './sales-shipping';

/** Sales: customers, and sales orders that reserve, ship and release stock through LedgerService. */
@Module({
  imports: [InventoryModule],
  controllers: [CustomersController, SalesOrdersController],
  providers: [CustomersService, SalesOrdersService, SalesShipping],
})
export class SalesModule {}
