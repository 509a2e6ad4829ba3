import { Amount, Audited, CalendarDateOrNull, Flag, Id, IdOrNull, Int, ListOf, OneOf, Text, TextOrNull } from '../common/responses';
import { SO_STATUSES } from './sales.dto';

/** A customer (CONTRACT §7). */
export class CustomerResponse extends Audited {
  @Id() id: string;
  @Text() code: string;
  @Text() name: string;
  @TextOrNull() email: string | null;
  @TextOrNull() phone: string | null;
  @TextOrNull() address: string | null;
  @Flag() isActive: boolean;
}

export class SalesOrderLineResponse {
  @Id() id: string;
  @Int() lineNo: number;
  @Id() itemId: string;
  @Amount('in uomId') qty: number;
  @Id() uomId: string;
  @Amount('per uomId; exact up to 15 significant digits') unitPrice: number;
  @Amount('in uomId') qtyShipped: number;
  @IdOrNull('the hold made when the order opened (stock lines)') reservationId: string | null;
}

/** A sales order (CONTRACT §7). */
export class SalesOrderResponse extends Audited {
  @Id() id: string;
  @Text() orderNo: string;
  @Id() customerId: string;
  @Id() facilityId: string;
  @OneOf(SO_STATUSES) status: string;
  @CalendarDateOrNull() requestedDate: string | null;
  @TextOrNull() notes: string | null;
  @ListOf(() => SalesOrderLineResponse) lines: SalesOrderLineResponse[];
  @Amount('Σ qty × unitPrice, exact up to 15 significant digits') totalAmount: number;
}
