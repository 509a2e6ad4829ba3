import { AppError } from '../common/errors';
import { convertToBase, siblingField } from './uom-math';
import { failure } from '../../test/support/failure';

const BOX = { label: 'unit BOX', decimals: 0, factor: 12 };
const KG_IN_G = { label: 'unit KG', decimals: 3, factor: 1000 };


describe('convertToBase', () => {
  it('multiplies by the factor', () => {
    expect(convertToBase(2, BOX, 0, 'qty').toFixed()).toBe('24');
    expect(convertToBase(1.25, KG_IN_G, 2, 'qty').toFixed()).toBe('1250');
  });

  it('keeps a base quantity as it is', () => {
    expect(convertToBase(7, { label: 'base', decimals: 0, factor: 1 }, 0, 'qty').toFixed()).toBe('7');
    expect(convertToBase(0.125, { label: 'base', decimals: 3, factor: 1 }, 3, 'qty').toFixed()).toBe('0.125');
  });

  it('rounds the product up to the base decimals', () => {
    // 1 of the unit = 0.333333 base units with 2 decimals: 0.333333 → 0.34, 3 × 0.333333 = 0.999999 → 1
    const third = { label: 'unit X', decimals: 0, factor: '0.333333' };
    expect(convertToBase(1, third, 2, 'qty').toFixed()).toBe('0.34');
    expect(convertToBase(3, third, 2, 'qty').toFixed()).toBe('1');
    // 0.001 × 1.5 = 0.0015 base units of 0 decimals → 1 (up, never down to 0)
    expect(convertToBase(0.001, { label: 'unit KG', decimals: 3, factor: '1.5' }, 0, 'qty').toFixed()).toBe('1');
    // 5 × 2.5 = 12.5 → 13
    expect(convertToBase(5, { label: 'unit PK', decimals: 0, factor: '2.5' }, 0, 'qty').toFixed()).toBe('13');
  });

  it('is exact decimal arithmetic, not float', () => {
    // 0.1 × 3 is 0.30000000000000004 in floats
    expect(convertToBase(0.1, { label: 'unit L', decimals: 3, factor: 3 }, 6, 'qty').toFixed()).toBe('0.3');
  });

  it('refuses more decimals than the unit the quantity is expressed in, naming the field', () => {
    const err = failure(() => convertToBase(1.5, BOX, 3, 'lines[1].qty'));
    expect(err).toBeInstanceOf(AppError);
    expect(err.status).toBe(400);
    expect(err.code).toBe('validation_failed');
    expect(err.details).toEqual([{ field: 'lines[1].qty', message: 'must have at most 0 decimals (unit BOX)' }]);
    expect(failure(() => convertToBase(0.0001, KG_IN_G, 6, 'qty')).status).toBe(400);
    // exponent notation counts its decimals too
    expect(failure(() => convertToBase(1e-7, { label: 'base', decimals: 6, factor: 1 }, 6, 'qty')).status).toBe(400);
  });
});

describe('siblingField', () => {
  it('replaces the last path segment', () => {
    expect(siblingField('lines[2].qty', 'uomId')).toBe('lines[2].uomId');
    expect(siblingField('qty', 'uomId')).toBe('uomId');
    expect(siblingField('a.b[0].qty', 'uomId')).toBe('a.b[0].uomId');
  });
});
