import { Amount, Audited, Flag, Id, IdOrNull, Int, ListOf, OneOf, Text, TextOrNull } from '../common/responses';
import { FACILITY_TYPES } from './facilities/facility.entity';
import { IDENTIFIER_TYPES, ITEM_KINDS, TRACKING_MODES } from './items/item.entity';
import { LOCATION_TYPES } from './locations/location.entity';

/** A unit of measure (CONTRACT §4). */
export class UomResponse {
  @Id() id: string;
  @Text('unique per tenant, e.g. EA, KG') code: string;
  @Text() name: string;
  @Int('decimals a quantity in this unit may have (0–6)') decimals: number;
}

export class ItemIdentifierResponse {
  @OneOf(IDENTIFIER_TYPES) type: string;
  @Text() value: string;
}

export class ItemAttributeResponse {
  @Text() name: string;
  @Text() value: string;
}

export class UomConversionResponse {
  @Id() uomId: string;
  @Amount('1 of uomId = factor base units') factor: number;
}

/** An item (CONTRACT §4). */
export class ItemResponse extends Audited {
  @Id() id: string;
  @Text() itemNo: string;
  @Text() name: string;
  @TextOrNull() description: string | null;
  @OneOf(ITEM_KINDS) itemKind: string;
  @Id() baseUomId: string;
  @OneOf(TRACKING_MODES) lotTracking: string;
  @OneOf(TRACKING_MODES) serialTracking: string;
  @OneOf(TRACKING_MODES) expiryTracking: string;
  @Flag() isActive: boolean;
  @ListOf(() => ItemIdentifierResponse) identifiers: ItemIdentifierResponse[];
  @ListOf(() => ItemAttributeResponse) attributes: ItemAttributeResponse[];
  @ListOf(() => UomConversionResponse) uomConversions: UomConversionResponse[];
}

/** A facility (CONTRACT §4). */
export class FacilityResponse extends Audited {
  @Id() id: string;
  @Text() code: string;
  @Text() name: string;
  @OneOf(FACILITY_TYPES) type: string;
  @TextOrNull() address: string | null;
  @Flag() isActive: boolean;
}

/** A location with its subtree (CONTRACT §4). */
export class LocationResponse extends Audited {
  @Id() id: string;
  @Id() facilityId: string;
  @IdOrNull() parentId: string | null;
  @Text() code: string;
  @Text() name: string;
  @OneOf(LOCATION_TYPES) type: string;
  @Text('codes from the root joined by /') path: string;
  @Flag() isActive: boolean;
  @ListOf(() => LocationResponse, 'its child locations, each with theirs') children: LocationResponse[];
}
