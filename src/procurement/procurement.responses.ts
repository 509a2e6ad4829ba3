import { Amount, Audited, CalendarDate, CalendarDateOrNull, Flag, Id, IdOrNull, Ids, Instant, Int, ListOf, OneOf, Strings, Text, TextOrNull } from '../common/responses';
import { PO_STATUSES, REQ_STATUSES } from './procurement.dto';

/** A supplier (CONTRACT §6). */
export class SupplierResponse extends Audited {
  @Id() id: string;
  @Text() code: string;
  @Text() name: string;
  @TextOrNull() email: string | null;
  @TextOrNull() phone: string | null;
  @TextOrNull() address: string | null;
  @Text('ISO 4217') currency: string;
  @Flag() isActive: boolean;
}

export class PurchaseOrderLineResponse {
  @Id() id: string;
  @Int() lineNo: number;
  @Id() itemId: string;
  @Amount('in uomId') qtyOrdered: number;
  @Id() uomId: string;
  @Amount('per uomId; exact up to 15 significant digits') unitPrice: number;
  @Amount('in uomId') qtyReceived: number;
}

/** A purchase order (CONTRACT §6). */
export class PurchaseOrderResponse extends Audited {
  @Id() id: string;
  @Text() poNo: string;
  @Id() supplierId: string;
  @Id() facilityId: string;
  @OneOf(PO_STATUSES) status: string;
  @Text('ISO 4217') currency: string;
  @CalendarDate() orderDate: string;
  @CalendarDateOrNull() expectedDate: string | null;
  @TextOrNull() notes: string | null;
  @ListOf(() => PurchaseOrderLineResponse) lines: PurchaseOrderLineResponse[];
  @Amount('Σ qtyOrdered × unitPrice, exact up to 15 significant digits') totalAmount: number;
  @IdOrNull('the requisition it was converted from') requisitionId: string | null;
}

export class ReceiptLineResponse {
  @Int() lineNo: number;
  @Id() poLineId: string;
  @Id() itemId: string;
  @Amount('in the order line\'s UOM') qty: number;
  @IdOrNull() locationId: string | null;
  @TextOrNull() lotNo: string | null;
  @CalendarDateOrNull() expiryDate: string | null;
  @Strings() serialNos: string[];
  @IdOrNull() statusId: string | null;
}

/** A goods receipt (CONTRACT §6). */
export class ReceiptResponse {
  @Id() id: string;
  @Text() receiptNo: string;
  @Id() purchaseOrderId: string;
  @Instant() receivedAt: string;
  @IdOrNull('the receipt transaction (null when only non-stock lines were received)') transactionId: string | null;
  @TextOrNull() notes: string | null;
  @ListOf(() => ReceiptLineResponse) lines: ReceiptLineResponse[];
  @Text() createdBy: string;
  @Instant() createdAt: string;
}

export class RequisitionLineResponse {
  @Id() id: string;
  @Int() lineNo: number;
  @Id() itemId: string;
  @Amount('in uomId') qty: number;
  @Id() uomId: string;
  @IdOrNull() supplierId: string | null;
}

/** A requisition (CONTRACT §6). */
export class RequisitionResponse extends Audited {
  @Id() id: string;
  @Text() reqNo: string;
  @Id() facilityId: string;
  @OneOf(REQ_STATUSES) status: string;
  @CalendarDateOrNull() neededBy: string | null;
  @TextOrNull() notes: string | null;
  @ListOf(() => RequisitionLineResponse) lines: RequisitionLineResponse[];
  @Ids('the draft purchase orders it was converted into') purchaseOrderIds: string[];
}
