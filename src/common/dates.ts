import { buildMessage, isISO8601, ValidateBy, ValidationOptions } from 'class-validator';

/**
 * A strict ISO 8601 calendar date (midnight UTC) or date-time with an offset, that JavaScript (and so
 * the database) reads as the same instant. Strict ISO 8601 alone still admits week (`2026-W05`) and ordinal (`2026-032`) dates, which
 * `Date.parse` cannot read; non-strict admits impossible days (`2026-02-30`, read as March 2).
 */
export const isDateTime = (value: unknown): value is string =>
  typeof value === 'string' &&
  isISO8601(value, { strict: true }) &&
  !Number.isNaN(Date.parse(value)) &&
  // A time of day names an instant only with its offset (Z or ±hh:mm): no server-local readings.
  (!value.includes('T') || /(Z|[+-]\d{2}:?\d{2})$/i.test(value));

/** `YYYY-MM-DD` naming a day that exists (`2024-02-29` yes, `2026-02-30` and `2026-W01-1` no). */
export const isCalendarDate = (value: unknown): value is string =>
  typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) && isDateTime(value);

/** A string holding an ISO 8601 date-time or date (see isDateTime); never a number, boolean or Date. */
export function IsDateTime(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isDateTime',
      validator: {
        validate: isDateTime,
        defaultMessage: buildMessage((each) => `${each}$property must be an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z`, options),
      },
    },
    options,
  );
}

/** A string holding a calendar date `YYYY-MM-DD` that exists (see isCalendarDate). */
export function IsCalendarDate(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isCalendarDate',
      validator: {
        validate: isCalendarDate,
        defaultMessage: buildMessage((each) => `${each}$property must be a date YYYY-MM-DD`, options),
      },
    },
    options,
  );
}

/** A validated date-time string as a Date; null and undefined pass through (null clears, undefined leaves as is). */
export function toDate<T extends null | undefined>(value: string | T): Date | T {
  return typeof value === 'string' ? new Date(value) : value;
}
