import { ArgumentMetadata, Injectable, PipeTransform, ValidationError, ValidationPipe } from '@nestjs/common';
import { ValidateIf, ValidationOptions } from 'class-validator';
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
    exceptionFactory: (errors) => {
      const details = flattenValidationErrors(errors);
      const first = details[0];
      return validationFailed(
        first ? `${first.field}: ${first.message}${details.length > 1 ? ` (and ${details.length - 1} more)` : ''}` : 'Validation failed',
        details,
      );
    },
  });
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
    if (metadata.type === 'body' && (value === undefined || value === null) && isDto(metadata)) value = {};
    return (metadata.type === 'query' ? this.query : this.body).transform(value, metadata);
  }
}

const isDto = (m: ArgumentMetadata) => typeof m.metatype === 'function' && ![String, Number, Boolean, Object, Array].includes(m.metatype as never);

/**
 * Optional but not nullable: an absent property skips validation, `null` is validated like any value
 * (and so refused by @IsString() etc.). class-validator's @IsOptional() lets `null` through, which
 * would reach a NOT NULL column as a 500.
 */
export const IsOptionalNonNull = (options?: ValidationOptions) => ValidateIf((_object, value) => value !== undefined, options);
