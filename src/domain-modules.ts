import { Type } from '@nestjs/common';
import { CatalogModule } from './catalog/catalog.module';
import { DocumentsModule } from './documents/documents.module';
import { EventsModule } from './events/events.module';
import { InventoryModule } from './inventory/inventory.module';
import { ProcurementModule } from './procurement/procurement.module';
import { SalesModule } from './sales/sales.module';
import { ProductionModule } from './production/production.module';
import { WebhooksModule } from './webhooks/webhooks.module';

/** The domain modules mounted under /v1 (one folder each). */
export const DOMAIN_MODULES: Type[] = [DocumentsModule, CatalogModule, InventoryModule, ProcurementModule, SalesModule, ProductionModule, EventsModule, WebhooksModule];
