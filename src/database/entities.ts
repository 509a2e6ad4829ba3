import { Facility } from '../catalog/facilities/facility.entity';
import { Item, ItemAttribute, ItemIdentifier, ItemUomConversion } from '../catalog/items/item.entity';
import { Location } from '../catalog/locations/location.entity';
import { Uom } from '../catalog/uoms/uom.entity';
import { IdempotencyKey } from '../common/idempotency-key.entity';
import { EventPrune, EventRecord } from '../events/event.entity';
import { Webhook, WebhookDelivery, WebhookSegment } from '../webhooks/webhook.entity';
import { DocumentSequence } from '../documents/document-sequence.entity';
import { CountLine, CountSession } from '../inventory/counts/count-session.entity';
import { Allocation, Balance, InventoryPosition, LedgerLine, LedgerTransaction, Lot, Reservation, Serial } from '../inventory/ledger/ledger.entities';
import { ReorderPolicy } from '../inventory/policies/policy.entity';
import { StockStatus } from '../inventory/stock/stock-status.entity';
import { TransferOrder, TransferOrderLine } from '../inventory/transfers/transfer.entity';
import { PurchaseOrder, PurchaseOrderLine } from '../procurement/purchase-order.entity';
import { Receipt, ReceiptLine } from '../procurement/receipt.entity';
import { Requisition, RequisitionLine } from '../procurement/requisition.entity';
import { Supplier } from '../procurement/supplier.entity';
import { Bom, BomComponent } from '../production/bom.entity';
import { WorkOrder, WorkOrderComponent } from '../production/work-order.entity';
import { Customer } from '../sales/customer.entity';
import { SalesOrder, SalesOrderLine } from '../sales/sales-order.entity';
import { Tenant } from '../tenancy/tenant.entity';

/**
 * Every TypeORM entity of the service: one per table (test/platform/entities checks each against the
 * migrated database, column by column, and that no table lacks one). Modules add theirs here; the CLI
 * data source uses this list too.
 */
export const ENTITIES: Function[] = [
  Uom,
  Item,
  ItemIdentifier,
  ItemAttribute,
  ItemUomConversion,
  Facility,
  Location,
  Tenant,
  DocumentSequence,
  IdempotencyKey,
  StockStatus,
  Lot,
  Balance,
  InventoryPosition,
  LedgerTransaction,
  LedgerLine,
  Serial,
  Reservation,
  Allocation,
  TransferOrder,
  TransferOrderLine,
  CountSession,
  CountLine,
  ReorderPolicy,
  Supplier,
  PurchaseOrder,
  PurchaseOrderLine,
  Receipt,
  ReceiptLine,
  Requisition,
  RequisitionLine,
  Customer,
  SalesOrder,
  SalesOrderLine,
  Bom,
  BomComponent,
  WorkOrder,
  WorkOrderComponent,
  EventRecord,
  EventPrune,
  Webhook,
  WebhookDelivery,
  WebhookSegment,
];
