import { PartialType } from '@nestjs/swagger';
import { CreateFacilityDto } from './create-facility.dto';

/** Every create field, all optional; `null` only where the field is nullable (address). */
export class UpdateFacilityDto extends PartialType(CreateFacilityDto, { skipNullProperties: false }) {}
