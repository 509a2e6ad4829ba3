import { Amount, Audited, CalendarDateOrNull, Id, IdOrNull, InstantOrNull, Int, ListOf, OneOf, TextOrNull, Text } from '../common/responses';
import { BOM_STATUSES, WO_STATUSES } from './production.dto';

export class BomComponentResponse {
  @Id() id: string;
  @Int() lineNo: number;
  @Id() itemId: string;
  @Amount('per outputQty of the output item, in uomId') qtyPer: number;
  @Id() uomId: string;
  @Amount('extra fraction consumed (0.05 = 5%)') scrapFactor: number;
}

/** A version of a bill of materials (CONTRACT §8). */
export class BomResponse extends Audited {
  @Id() id: string;
  @Id('the output item') itemId: string;
  @Int() versionNo: number;
  @OneOf(BOM_STATUSES) status: string;
  @Amount() outputQty: number;
  @TextOrNull() notes: string | null;
  @ListOf(() => BomComponentResponse) components: BomComponentResponse[];
  @InstantOrNull() activatedAt: string | null;
}

export class WorkOrderComponentResponse {
  @Id() id: string;
  @Int() lineNo: number;
  @Id() itemId: string;
  @Amount('base units') qtyRequired: number;
  @Amount('base units') qtyIssued: number;
  @IdOrNull('the hold made at release') reservationId: string | null;
}

/** A work order (CONTRACT §8). */
export class WorkOrderResponse extends Audited {
  @Id() id: string;
  @Text() woNo: string;
  @Id() itemId: string;
  @Id() bomId: string;
  @Id() facilityId: string;
  @Amount() qtyPlanned: number;
  @Amount() qtyCompleted: number;
  @OneOf(WO_STATUSES) status: string;
  @IdOrNull() outputLocationId: string | null;
  @CalendarDateOrNull() dueDate: string | null;
  @ListOf(() => WorkOrderComponentResponse) components: WorkOrderComponentResponse[];
  @IdOrNull('the production transaction') transactionId: string | null;
  @InstantOrNull() releasedAt: string | null;
  @InstantOrNull() completedAt: string | null;
}
