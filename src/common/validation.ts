import { applyDecorators, ArgumentMetadata, Injectable, PipeTransform, ValidationError, ValidationPipe } from '@nestjs/common';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, getMetadataStorage, IsArray, IsObject, ValidateIf, ValidateNested, ValidationOptions } from 'class-validator';
import { ErrorDetail, MAX_ERROR_DETAILS, validationFailed } from './errors';

// class-transformer's metadata (which nested type a property holds): its runtime path has no typings of its own.
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as typeof import('class-transformer/types/storage');

/** Flattens class-validator errors into `{field: 'lines[0].qty', message}` details. */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  for (const e of errors) {
    const field = !parent ? e.property : /^\d+$/.test(e.property) ? `${parent}[${e.property}]` : `${parent}.${e.property}`;
    for (const [rule, msg] of Object.entries(e.constraints ?? {})) {
      out.push({ field, message: rule === 'whitelistValidation' ? 'is not an allowed field' : stripProperty(msg, e.property) });
    }
    // A loop, not push(...): a spread of tens of thousands of details overflows the stack.
    if (e.children?.length) for (const d of flattenValidationErrors(e.children, field)) out.push(d);
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
    // One message per field (its first broken rule): a body of 1,000 wrong lines is refused in bounded time.
    stopAtFirstError: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => invalidBody(flattenValidationErrors(errors)),
  });
}

/** 400 validation_failed whose message names the first detail and how many more there are. */
function invalidBody(details: ErrorDetail[]) {
  const first = details[0];
  return validationFailed(
    first ? `${first.field}: ${first.message}${details.length > 1 ? ` (and ${details.length - 1} more)` : ''}` : 'Validation failed',
    details.slice(0, MAX_ERROR_DETAILS),
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
      // The DTO's own array limits first (they name the field's limit), then the raw body's structure.
      const limits = isDto(metadata) ? arrayLimitErrors(value, metadata.metatype as Class) : [];
      const details = limits.length ? limits : bodyStructureErrors(value);
      if (details.length) throw invalidBody(details);
      if (isDto(metadata)) nullsAsAbsent(value, metadata.metatype as Class);
    }
    return (metadata.type === 'query' ? this.query : this.body).transform(value, metadata);
  }
}

/** No array in any body may hold more (the largest any field allows: `serialNos`, CONTRACT §1). */
export const MAX_ARRAY_ENTRIES = 10_000;

type Class = new (...args: never[]) => object;

/**
 * The DTO's own array limits (`ArrayMaxSize`: 1,000 lines, 100 identifiers, …) checked on the raw body
 * before it is transformed or validated, following nested DTOs (class-transformer's `@Type`): a body
 * with 60,000 lines is refused at once instead of being validated line by line first. Arrays within
 * their limits are walked, so the cost is bounded by the limits themselves.
 */
export function arrayLimitErrors(value: unknown, type: Class, path = '', depth = 0): ErrorDetail[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || depth > MAX_BODY_DEPTH) return [];
  const found: ErrorDetail[] = [];
  const body = value as Record<string, unknown>;
  for (const m of getMetadataStorage().getTargetValidationMetadatas(type, '', true, false)) {
    const v = body[m.propertyName];
    if (m.name === 'arrayMaxSize' && Array.isArray(v) && v.length > (m.constraints[0] as number)) {
      found.push({ field: path ? `${path}.${m.propertyName}` : m.propertyName, message: `must contain at most ${m.constraints[0]} entries (it has ${v.length})` });
    }
  }
  if (found.length) return found;
  for (const key of Object.keys(body)) {
    const nested = defaultMetadataStorage.findTypeMetadata(type, key)?.typeFunction() as Class | undefined;
    if (!nested) continue;
    const field = path ? `${path}.${key}` : key;
    const v = body[key];
    const elements = Array.isArray(v) ? v.map((e, i) => [e, `${field}[${i}]`] as const) : [[v, field] as const];
    for (const [e, f] of elements) {
      const inner = arrayLimitErrors(e, nested, f, depth + 1);
      if (inner.length) return inner;
    }
  }
  return found;
}

/**
 * JSON `null` in a field that is optional and not nullable is the field left out (CONTRACT §1): the key
 * is removed before validation, at any depth of nested DTOs. A nullable field (`nullable: true` in its
 * OpenAPI property: `null` clears it) keeps its null, and a required one keeps it too, so its validators
 * refuse it (400 naming the field). Optional means `required: false` in the OpenAPI property or a
 * conditional validator (`@IsOptional()`, `IsOptionalNonNull()`). Runs on a body that passed `bodyStructureErrors` (bounded depth and size).
 */
export function nullsAsAbsent(value: unknown, type: Class, depth = 0): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || depth > MAX_BODY_DEPTH) return;
  const body = value as Record<string, unknown>;
  const optional = optionalFields(type);
  for (const key of Object.keys(body)) {
    const v = body[key];
    if (v === null) {
      if (optional.has(key)) delete body[key];
      continue;
    }
    const nested = defaultMetadataStorage.findTypeMetadata(type, key)?.typeFunction() as Class | undefined;
    if (!nested) continue;
    for (const e of Array.isArray(v) ? v : [v]) nullsAsAbsent(e, nested, depth + 1);
  }
}

const OPTIONAL_FIELDS = new WeakMap<Class, Set<string>>();

/** The optional, non-nullable properties of a DTO class (computed once per class). */
function optionalFields(type: Class): Set<string> {
  let fields = OPTIONAL_FIELDS.get(type);
  if (fields) return fields;
  fields = new Set<string>();
  const conditional = new Set(getMetadataStorage().getTargetValidationMetadatas(type, '', true, false).filter((m) => m.type === 'conditionalValidation').map((m) => m.propertyName));
  const names = new Set<string>([...conditional, ...((Reflect.getMetadata(API_PROPERTIES, type.prototype) as string[] | undefined) ?? []).map((k) => k.slice(1))]);
  for (const name of names) {
    const api = Reflect.getMetadata(API_PROPERTY, type.prototype, name) as { required?: boolean; nullable?: boolean } | undefined;
    if (api?.nullable) continue;
    if (api?.required === false || conditional.has(name)) fields.add(name);
  }
  OPTIONAL_FIELDS.set(type, fields);
  return fields;
}

/** @nestjs/swagger's metadata keys: a class's property list, and one property's OpenAPI options. */
const API_PROPERTIES = 'swagger/apiModelPropertiesArray';
const API_PROPERTY = 'swagger/apiModelProperties';

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
    if (typeof v === 'string' && !(v as string & { isWellFormed(): boolean }).isWellFormed()) {
      // A lone UTF-16 surrogate (`"\ud800"` in JSON) cannot be stored as text: PostgreSQL would keep U+FFFD instead.
      found.push({ field: path, message: 'contains an unpaired UTF-16 surrogate' });
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= MAX_BODY_DEPTH) return [...found, { field: path, message: `is nested more than ${MAX_BODY_DEPTH} levels deep` }];
    const isArray = Array.isArray(v);
    if (isArray && v.length > MAX_ARRAY_ENTRIES) return [{ field: path, message: `must contain at most ${MAX_ARRAY_ENTRIES} entries (it has ${v.length})` }];
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
