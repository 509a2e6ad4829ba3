import { applyDecorators, Param, PipeTransform } from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsUUID } from 'class-validator';
import { notFound } from './errors';

/** A UUID in canonical 8-4-4-4-12 hex form, any version (what Postgres' uuid type accepts and prints). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID as PostgreSQL prints it: canonical and lower-case (what the request DTOs' ids become). */
export const DB_UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * A malformed id in a path cannot name any record, so it is 404 not_found (CONTRACT.md §2),
 * never 400, and never a database cast error (500). Valid ids are lower-cased.
 */
export class ParseUuidOr404Pipe implements PipeTransform<unknown, string> {
  constructor(private readonly what = 'Record') {}

  transform(value: unknown): string {
    if (typeof value !== 'string' || !UUID_PATTERN.test(value)) throw notFound(this.what);
    return value.toLowerCase();
  }
}

/**
 * `@UuidParam('id', 'Item') id: string` — a path id; malformed → 404 "Item not found". It documents
 * itself in the OpenAPI description (`format: uuid`).
 */
export const UuidParam = (name: string, what?: string): ParameterDecorator => (target, key, index) => {
  Param(name, new ParseUuidOr404Pipe(what))(target, key, index);
  const descriptor = Object.getOwnPropertyDescriptor(target, key!)!;
  ApiParam({ name, type: 'string', format: 'uuid', description: `${what ?? 'Record'} id (a malformed one answers 404)` })(target, key!, descriptor);
};

/**
 * A DTO property holding an id (any UUID version), lower-cased so ids compare equal in code as they
 * do in Postgres. Malformed → 400 validation_failed (the request itself is wrong).
 */
export const IsUuidRef = () =>
  applyDecorators(
    Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.toLowerCase() : value)),
    IsUUID('loose', { message: '$property must be a UUID' }),
  );
