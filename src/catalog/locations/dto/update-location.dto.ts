import { PartialType, PickType } from '@nestjs/swagger';
import { CreateLocationDto } from './create-location.dto';

/** Only name, type and isActive: code and parent are fixed because `path` (and the tree) derive from them. */
export class UpdateLocationDto extends PartialType(PickType(CreateLocationDto, ['name', 'type', 'isActive'] as const), {
  skipNullProperties: false,
}) {}
