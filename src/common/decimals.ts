import { buildMessage, ValidateBy, ValidationOptions } from 'class-validator';

/**
 * Decimal places of a number as JSON wrote it: 1.25 → 2, 1e-7 → 7, 1.5e-7 → 8, 1e21 → 0.
 * (class-validator's IsNumber({maxDecimalPlaces}) misreads exponent notation: 1.5e-7 passes as 4.)
 */
export function decimalPlaces(value: number): number {
  const [mantissa, exponent = '0'] = String(value).toLowerCase().split('e');
  const fraction = mantissa.split('.')[1]?.length ?? 0;
  return Math.max(0, fraction - Number(exponent));
}

/** A finite number with at most `max` decimal places. */
export function MaxDecimals(max: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'maxDecimals',
      constraints: [max],
      validator: {
        validate: (value: unknown) => typeof value === 'number' && Number.isFinite(value) && decimalPlaces(value) <= max,
        defaultMessage: buildMessage((each) => `${each}$property must be a number with at most $constraint1 decimal places`, options),
      },
    },
    options,
  );
}
