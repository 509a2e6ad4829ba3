import { ApiProperty } from '@nestjs/swagger';
import {
  Amount, AmountOrNull, Audited, CalendarDateOrNull, Flag, Id, IdOrNull, Instant, InstantOrNull, Int, ListOf, OneOf, Strings, Text, TextOrNull,
  NotAResource,
} from '../common/responses';
import { COUNT_STATUSES } from './counts/dto/count-session.dto';
import { TRANSACTION_TYPES } from './ledger/posting';
import { DEMAND_TYPES, RESERVATION_STATUSES } from './reservations/dto/reservation.dto';
import { TRANSFER_STATUSES } from './transfers/dto/transfer.dto';

/** A stock status (CONTRACT §5). */
export class StockStatusResponse {
  @Id() id: string;
  @Text() code: string;
  @Text() name: string;
  @Flag('counts as available') isAvailable: boolean;
}

/** A lot of an item. */
export class LotResponse {
  @Id() id: string;
  @Id() itemId: string;
  @Text() lotNo: string;
  @CalendarDateOrNull() expiryDate: string | null;
}

/** A serial number of a serial-tracked item and where it is. */
export class SerialResponse {
  @Id() id: string;
  @Id() itemId: string;
  @Text() serialNo: string;
  @IdOrNull() lotId: string | null;
  @IdOrNull('where it was last; null before it was ever in stock') locationId: string | null;
  @IdOrNull() statusId: string | null;
  @Flag() inStock: boolean;
}

/** Stock of one (item, location, lot, status). */
export class BalanceResponse {
  @Id() itemId: string;
  @Text() itemNo: string;
  @Id() facilityId: string;
  @Id() locationId: string;
  @IdOrNull() lotId: string | null;
  @TextOrNull() lotNo: string | null;
  @CalendarDateOrNull() expiryDate: string | null;
  @Id() statusId: string;
  @Text() statusCode: string;
  @Amount() qtyOnHand: number;
  @Amount() qtyAllocated: number;
}

/** Available stock per (item, location), or per (item, facility) with groupBy=facility. */
export class AvailabilityResponse {
  @Id() itemId: string;
  @Id() facilityId: string;
  @ApiProperty({ type: String, format: 'uuid', required: false, description: 'per location (absent with groupBy=facility)' }) locationId?: string;
  @Amount() qtyOnHand: number;
  @Amount() qtyAllocated: number;
  @ApiProperty({ type: Number, required: false, description: 'open unallocated reservations (with groupBy=facility only)' }) qtyReserved?: number;
  @Amount('on hand − allocated (− reserved with groupBy=facility)') qtyAvailable: number;
}

export class TransactionLineResponse {
  @Int() lineNo: number;
  @Id() itemId: string;
  @Id() locationId: string;
  @IdOrNull() lotId: string | null;
  @TextOrNull() lotNo: string | null;
  @Id() statusId: string;
  @Amount('signed, in the item\'s base unit') qtyDelta: number;
  @Strings('serials moved ([] for items without serial tracking)') serialNos: string[];
}

/** A posted ledger transaction (CONTRACT §5); its events are the ledger's own (transaction.posted, stock.changed). */
@NotAResource()
export class TransactionResponse {
  @Id() id: string;
  @Text() txnNo: string;
  @OneOf(TRANSACTION_TYPES) type: string;
  @Instant() postedAt: string;
  @Text() postedBy: string;
  @TextOrNull() reason: string | null;
  @TextOrNull() sourceType: string | null;
  @IdOrNull() sourceId: string | null;
  @ListOf(() => TransactionLineResponse) lines: TransactionLineResponse[];
}

/** A hard allocation of a reservation. */
export class AllocationResponse {
  @Id() id: string;
  @Id() reservationId: string;
  @Id() itemId: string;
  @Id() locationId: string;
  @IdOrNull() lotId: string | null;
  @Amount() qty: number;
}

/** A reservation with its active allocations (CONTRACT §5). */
export class ReservationResponse extends Audited {
  @Id() id: string;
  @Text() reservationNo: string;
  @Id() itemId: string;
  @Id() facilityId: string;
  @Amount() qty: number;
  @Amount() qtyAllocated: number;
  @Amount() qtyFulfilled: number;
  @OneOf(RESERVATION_STATUSES) status: string;
  @OneOf(DEMAND_TYPES) demandType: string;
  @IdOrNull() demandId: string | null;
  @IdOrNull() demandLineId: string | null;
  @InstantOrNull() expiresAt: string | null;
  @TextOrNull() notes: string | null;
  @ListOf(() => AllocationResponse) allocations: AllocationResponse[];
}

export class TransferLineResponse {
  @Id() id: string;
  @Int() lineNo: number;
  @Id() itemId: string;
  @Amount() qty: number;
  @Id() fromLocationId: string;
  @Id() toLocationId: string;
  @IdOrNull() lotId: string | null;
  @Amount() qtyShipped: number;
  @Amount() qtyReceived: number;
}

/** A transfer order (CONTRACT §5). */
export class TransferResponse extends Audited {
  @Id() id: string;
  @Text() transferNo: string;
  @Id() fromFacilityId: string;
  @Id() toFacilityId: string;
  @OneOf(TRANSFER_STATUSES) status: string;
  @TextOrNull() notes: string | null;
  @ListOf(() => TransferLineResponse) lines: TransferLineResponse[];
  @InstantOrNull() shippedAt: string | null;
  @InstantOrNull() receivedAt: string | null;
}

export class CountLineResponse {
  @Id() itemId: string;
  @Id() locationId: string;
  @IdOrNull() lotId: string | null;
  @TextOrNull() lotNo: string | null;
  @Amount() countedQty: number;
  @AmountOrNull('on hand at completion (null while open)') systemQty: number | null;
  @AmountOrNull('counted − on hand at completion (null while open)') varianceQty: number | null;
}

/** A count session (CONTRACT §5). */
export class CountSessionResponse extends Audited {
  @Id() id: string;
  @Text() sessionNo: string;
  @Id() facilityId: string;
  @OneOf(COUNT_STATUSES) status: string;
  @TextOrNull() notes: string | null;
  @IdOrNull() transactionId: string | null;
  @InstantOrNull() completedAt: string | null;
  @ListOf(() => CountLineResponse) lines: CountLineResponse[];
}

/** A reorder policy (CONTRACT §5). */
export class PolicyResponse extends Audited {
  @Id() id: string;
  @Id() itemId: string;
  @Id() facilityId: string;
  @Amount() minQty: number;
  @Amount() maxQty: number;
  @Amount() safetyStock: number;
  @Amount() reorderQty: number;
  @Int() leadTimeDays: number;
  @Flag() isActive: boolean;
}

/** A reorder suggestion. */
export class SuggestionResponse {
  @Id() itemId: string;
  @Id() facilityId: string;
  @Amount() projectedQty: number;
  @Amount() suggestedQty: number;
}
