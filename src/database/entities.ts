import { Uom } from '../catalog/uoms/uom.entity';

/** Every TypeORM entity of the service (modules add theirs here; the CLI data source uses this list too). */
export const ENTITIES: Function[] = [Uom];
