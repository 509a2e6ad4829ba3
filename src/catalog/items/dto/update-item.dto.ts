import { PartialType } from '@nestjs/swagger';
import { CreateItemDto } from './create-item.dto';

/**
 * Every create field, all optional; `null` only where the field is nullable (description).
 * A given identifiers/attributes/uomConversions array replaces the item's list.
 */
export class UpdateItemDto extends PartialType(CreateItemDto, { skipNullProperties: false }) {}
