import { applyDecorators, ArgumentMetadata, Injectable, PipeTransform, ValidationError, ValidationPipe } from '@nestjs/common';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsObject, ValidateIf, ValidateNested, ValidationOptions } from 'class-validator';
import { ErrorDetail, validationFailed } from './errors';

/** Flattens class-validator errors into `{field: 'lines[0].qty', message}` details. */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  for (const e of errors) {
    const field = !parent ? e.property : /^\d+$/.test(e.property) ? `${parent}[${e.property}]` : `${parent}.${e.property}`;
    for (const [rule, msg] of Object.entries(e.constraints ?? {})) {
      out.push({ field, message: rule === 'whitelistValidation' ? 'is not an allowed field' : stripProperty(msg, e.property) });
    }
    if (e.children?.length) out.push(...flattenValidationErrors(e.children, field));
  }
  return out;
}

/** class-validator messages start with the property name ("qty must be…"); the field already says it. */
const stripProperty = (msg: string, property: string) =>
  msg.startsWith(`${property} `) ? msg.slice(property.length + 1) : msg;

function pipe(forbidNonWhitelisted: boolean): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted,
    forbidUnknownValues: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => invalidBody(flattenValidationErrors(errors)),
  });
}

/** 400 validation_failed whose message names the first detail. */
function invalidBody(details: ErrorDetail[]) {
  const first = details[0];
  return validationFailed(
    first ? `${first.field}: ${first.message}${details.length > 1 ? ` (and ${details.length - 1} more)` : ''}` : 'Validation failed',
    details,
  );
}

/**
 * The global pipe: transform and validate with class-validator; 400 `validation_failed` with details.
 * Unknown body fields are rejected; unknown query parameters are ignored (CONTRACT.md §1).
 */
@Injectable()
export class AppValidationPipe implements PipeTransform {
  private readonly body = pipe(true);
  private readonly query = pipe(false);

  transform(value: unknown, metadata: ArgumentMetadata) {
    if (metadata.type === 'body') {
      if ((value === undefined || value === null) && isDto(metadata)) value = {};
      const details = bodyStructureErrors(value);
      if (details.length) throw invalidBody(details);
    }
    return (metadata.type === 'query' ? this.query : this.body).transform(value, metadata);
  }
}

/** Keys that name or reach an object's prototype: refused in bodies so they can never pollute or slip past the whitelist. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Far deeper than any DTO nests; class-transformer recurses per level, so a much deeper body would overflow the stack (a 500). */
export const MAX_BODY_DEPTH = 32;

/**
 * What the DTO pipe cannot judge in a raw body, as details: every own key, at any depth, that is a
 * prototype key (`{field: 'lines[0].__proto__'}`; JSON.parse makes `"__proto__"` an own property,
 * which class-transformer and the whitelist do not treat as a field), and nesting deeper than
 * MAX_BODY_DEPTH. Walks breadth-first over a queue, so it cannot overflow the stack itself.
 */
export function bodyStructureErrors(value: unknown): ErrorDetail[] {
  const found: ErrorDetail[] = [];
  const queue: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: '', depth: 0 }];
  for (let i = 0; i < queue.length; i++) {
    const { value: v, path, depth } = queue[i];
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= MAX_BODY_DEPTH) return [...found, { field: path, message: `is nested more than ${MAX_BODY_DEPTH} levels deep` }];
    const isArray = Array.isArray(v);
    for (const key of Object.keys(v)) {
      const field = isArray ? `${path}[${key}]` : path ? `${path}.${key}` : key;
      if (!isArray && PROTOTYPE_KEYS.has(key)) found.push({ field, message: 'is not an allowed field' });
      else queue.push({ value: (v as Record<string, unknown>)[key], path: field, depth: depth + 1 });
    }
  }
  return found;
}

const isDto = (m: ArgumentMetadata) => typeof m.metatype === 'function' && ![String, Number, Boolean, Object, Array].includes(m.metatype as never);

/**
 * Optional but not nullable: an absent property skips validation, `null` is validated like any value
 * (and so refused by @IsString() etc.). class-validator's @IsOptional() lets `null` through, which
 * would reach a NOT NULL column as a 500.
 */
export const IsOptionalNonNull = (options?: ValidationOptions) => ValidateIf((_object, value) => value !== undefined, options);

/**
 * An array of `type` objects, each validated as `type`: every element must be an object (not an
 * array: ValidateNested alone lets `[[{...}]]` through, with the inner object never validated).
 * Combine with IsOptionalNonNull() where the property is optional.
 */
export const NestedArray = (type: new () => object, size: { min?: number; max?: number } = {}) =>
  applyDecorators(
    IsArray(),
    ...(size.min !== undefined ? [ArrayMinSize(size.min)] : []),
    ...(size.max !== undefined ? [ArrayMaxSize(size.max)] : []),
    IsObject({ each: true, message: 'must contain only objects' }),
    ValidateNested({ each: true }),
    Type(() => type),
  );
