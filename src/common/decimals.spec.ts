import { validateSync } from 'class-validator';
import { decimalPlaces, MaxDecimals } from './decimals';

describe('decimalPlaces', () => {
  it.each([
    [0, 0], [12, 0], [1.5, 1], [0.125, 3], [-2.75, 2], [0.000001, 6],
    [1e-7, 7], [1.5e-7, 8], [1e21, 0], [1.25e3, 0], [1.2345e2, 2],
  ])('%p has %p decimal places', (value, places) => {
    expect(decimalPlaces(value)).toBe(places);
  });
});

describe('MaxDecimals', () => {
  class Probe {
    @MaxDecimals(6)
    factor: unknown;
  }
  const errors = (factor: unknown) => validateSync(Object.assign(new Probe(), { factor }));

  it('accepts up to the given decimals and rejects more, exponent notation included', () => {
    expect(errors(0.000001)).toHaveLength(0);
    expect(errors(12.5)).toHaveLength(0);
    expect(errors(1.5e-7)[0]?.constraints).toEqual({ maxDecimals: 'factor must be a number with at most 6 decimal places' });
    expect(errors(0.1234567)).toHaveLength(1);
  });

  it('rejects non-numbers and non-finite numbers', () => {
    expect(errors('1.5')).toHaveLength(1);
    expect(errors(Infinity)).toHaveLength(1);
    expect(errors(NaN)).toHaveLength(1);
  });
});
