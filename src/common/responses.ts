import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';

/**
 * Response classes: each resource has one class whose properties (`@ApiProperty`) are its OpenAPI
 * component schema, every field with type, format, nullability and `required`. A controller (or one of
 * its handlers) names its class with `@Returns(Class)`; the OpenAPI description then wraps it as a single
 * record (`{data}`) or, for a collection GET, a page (`{data: [...], count, limit, offset}`), and every
 * component schema is closed (`additionalProperties: false`). The e2e client checks every answer of the
 * suite against it, and a generated TypeScript client compiles against it.
 */
export const RESPONSE_KEY = 'inventory:response';

const NOT_A_RESOURCE = 'inventory:not-a-resource';

/**
 * On a response class whose records are not `<resource>.*` events of the feed (CONTRACT §9): a ledger
 * transaction (its events are the ledger's own), a webhook (not a feed resource; its create answer holds
 * the secret). Subclasses inherit it.
 */
export const NotAResource = (): ClassDecorator => (target) => Reflect.defineMetadata(NOT_A_RESOURCE, true, target);

/** Whether a response class is marked `@NotAResource()` (itself or a class it extends). */
export const isNotAResource = (type: Function): boolean => Reflect.getMetadata(NOT_A_RESOURCE, type) === true;

/** Every response class named by `@Returns`, for the OpenAPI document's components. */
export const RESPONSE_CLASSES = new Set<Function>();

/** The resource a controller's routes (or one route) answer with; `[Class]` for a plain array in `data`. */
export function Returns(type: Function | [Function]): ClassDecorator & MethodDecorator {
  RESPONSE_CLASSES.add(Array.isArray(type) ? type[0] : type);
  return SetMetadata(RESPONSE_KEY, type);
}

/**
 * Marks a collection GET that answers a feed page, `{data: [...], nextCursor, limit}` (the event feed),
 * rather than a page with count and offset.
 */
export const FEED_KEY = 'inventory:feed';
export const FeedPage = () => SetMetadata(FEED_KEY, true);

// Field decorators: one line per field in the response classes.
export const Id = (description?: string) => ApiProperty({ type: String, format: 'uuid', description });
export const IdOrNull = (description?: string) => ApiProperty({ type: String, format: 'uuid', nullable: true, description });
export const Text = (description?: string) => ApiProperty({ type: String, description });
export const TextOrNull = (description?: string) => ApiProperty({ type: String, nullable: true, description });
export const OneOf = (values: readonly string[], description?: string) => ApiProperty({ type: String, enum: values as string[], description });
/** A quantity or amount: a JSON number (exact up to 15 significant digits). */
export const Amount = (description?: string) => ApiProperty({ type: Number, description });
export const AmountOrNull = (description?: string) => ApiProperty({ type: Number, nullable: true, description });
export const Int = (description?: string) => ApiProperty({ type: Number, format: 'int32', description });
export const IntOrNull = (description?: string) => ApiProperty({ type: Number, format: 'int32', nullable: true, description });
export const Flag = (description?: string) => ApiProperty({ type: Boolean, description });
export const Instant = (description?: string) => ApiProperty({ type: String, format: 'date-time', description });
export const InstantOrNull = (description?: string) => ApiProperty({ type: String, format: 'date-time', nullable: true, description });
export const CalendarDate = (description?: string) => ApiProperty({ type: String, format: 'date', description });
export const CalendarDateOrNull = (description?: string) => ApiProperty({ type: String, format: 'date', nullable: true, description });
export const ListOf = (type: () => Function, description?: string) => ApiProperty({ type: () => [type()], description });
export const Strings = (description?: string) => ApiProperty({ type: String, isArray: true, description });
export const Ids = (description?: string) => applyDecorators(ApiProperty({ type: String, format: 'uuid', isArray: true, description }));

/** What every mutable document carries (CONTRACT §1). */
export abstract class Audited {
  @Int('+1 per change; send it back as If-Match') version: number;
  @Text('the token subject that created it') createdBy: string;
  @Text('the token subject that last changed it') updatedBy: string;
  @Instant() createdAt: string;
  @Instant() updatedAt: string;
}
