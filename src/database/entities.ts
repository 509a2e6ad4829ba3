import { Facility } from '../catalog/facilities/facility.entity';
import { Item, ItemAttribute, ItemIdentifier, ItemUomConversion } from '../catalog/items/item.entity';
import { Location } from '../catalog/locations/location.entity';
import { Uom } from '../catalog/uoms/uom.entity';

/** Every TypeORM entity of the service (modules add theirs here; the CLI data source uses this list too). */
export const ENTITIES: Function[] = [Uom, Item, ItemIdentifier, ItemAttribute, ItemUomConversion, Facility, Location];
