import { Column, Entity } from 'typeorm';
import { DocumentAudit, documentAudit, DocumentEntity, TenantEntity } from '../../common/entity';
import { numericTransformer } from '../../common/numeric';

export const ITEM_KINDS = ['stock', 'non_stock', 'service'] as const;
export type ItemKind = (typeof ITEM_KINDS)[number];
export const TRACKING_MODES = ['none', 'required'] as const;
export type TrackingMode = (typeof TRACKING_MODES)[number];
export const IDENTIFIER_TYPES = ['gtin', 'upc', 'ean', 'sku', 'mpn', 'supplier_sku', 'other'] as const;
export type IdentifierType = (typeof IDENTIFIER_TYPES)[number];

@Entity('items')
export class Item extends DocumentEntity {
  @Column('text', { name: 'item_no' })
  itemNo: string;

  @Column('text')
  name: string;

  @Column('text', { nullable: true })
  description: string | null;

  @Column('text', { name: 'item_kind' })
  itemKind: ItemKind;

  @Column('uuid', { name: 'base_uom_id' })
  baseUomId: string;

  @Column('text', { name: 'lot_tracking' })
  lotTracking: TrackingMode;

  @Column('text', { name: 'serial_tracking' })
  serialTracking: TrackingMode;

  @Column('text', { name: 'expiry_tracking' })
  expiryTracking: TrackingMode;

  @Column('boolean', { name: 'is_active' })
  isActive: boolean;
}

/** The item's child rows (identifiers, attributes, UOM conversions) each belong to one item. */
export abstract class ItemChild extends TenantEntity {
  @Column('uuid', { name: 'item_id' })
  itemId: string;
}

@Entity('item_identifiers')
export class ItemIdentifier extends ItemChild {
  @Column('text')
  type: IdentifierType;

  @Column('text')
  value: string;
}

@Entity('item_attributes')
export class ItemAttribute extends ItemChild {
  @Column('text')
  name: string;

  @Column('text')
  value: string;
}

@Entity('item_uom_conversions')
export class ItemUomConversion extends ItemChild {
  @Column('uuid', { name: 'uom_id' })
  uomId: string;

  /** 1 of `uomId` = `factor` base units. */
  @Column('numeric', { precision: 20, scale: 6, transformer: numericTransformer })
  factor: number;
}

export interface ItemView extends DocumentAudit {
  id: string;
  itemNo: string;
  name: string;
  description: string | null;
  itemKind: ItemKind;
  baseUomId: string;
  lotTracking: TrackingMode;
  serialTracking: TrackingMode;
  expiryTracking: TrackingMode;
  isActive: boolean;
  identifiers: { type: IdentifierType; value: string }[];
  attributes: { name: string; value: string }[];
  uomConversions: { uomId: string; factor: number }[];
}

export interface ItemChildren {
  identifiers: ItemIdentifier[];
  attributes: ItemAttribute[];
  uomConversions: ItemUomConversion[];
}

export const itemView = (i: Item, c: ItemChildren): ItemView => ({
  id: i.id,
  itemNo: i.itemNo,
  name: i.name,
  description: i.description,
  itemKind: i.itemKind,
  baseUomId: i.baseUomId,
  lotTracking: i.lotTracking,
  serialTracking: i.serialTracking,
  expiryTracking: i.expiryTracking,
  isActive: i.isActive,
  identifiers: c.identifiers.map((x) => ({ type: x.type, value: x.value })),
  attributes: c.attributes.map((x) => ({ name: x.name, value: x.value })),
  uomConversions: c.uomConversions.map((x) => ({ uomId: x.uomId, factor: x.factor })),
  ...documentAudit(i),
});
