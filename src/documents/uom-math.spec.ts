import { AppError } from '../common/errors';
import { convertAtLineRatio, convertToBase, siblingField } from './uom-math';
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

describe('convertAtLineRatio', () => {
  const BOX_UNIT = { label: 'unit BOX', decimals: 0 };

  it('converts at the line\'s own ratio, qtyBase / qty, whatever the item converts today', () => {
    // 2 BOX written as 24 base units: 1 BOX is 12
    expect(convertAtLineRatio(1, BOX_UNIT, { qty: '2', qtyBase: '24' }, 0, 'qty').toFixed()).toBe('12');
    expect(convertAtLineRatio(3, BOX_UNIT, { qty: '3', qtyBase: '36' }, 0, 'qty').toFixed()).toBe('36');
  });

  it('multiplies before dividing: an exact share stays exact, a true tail is rounded up', () => {
    // 10 LB written as 4.536 KG: 5 LB is 2.268 exactly; 3 LB is 1.3608 → 1.361
    const lb = { label: 'unit LB', decimals: 0 };
    expect(convertAtLineRatio(5, lb, { qty: 10, qtyBase: '4.536' }, 3, 'qty').toFixed()).toBe('2.268');
    expect(convertAtLineRatio(3, lb, { qty: 10, qtyBase: '4.536' }, 3, 'qty').toFixed()).toBe('1.361');
    // 3 written as 1 base unit (ratio 0.333…): 3 of them are 1 exactly, not 1.000001
    expect(convertAtLineRatio(3, lb, { qty: 3, qtyBase: 1 }, 6, 'qty').toFixed()).toBe('1');
  });

  it('refuses more decimals than the line\'s unit allows, naming the field', () => {
    const err = failure(() => convertAtLineRatio(0.5, BOX_UNIT, { qty: 2, qtyBase: 24 }, 0, 'lines[0].qty'));
    expect(err.status).toBe(400);
    expect(err.details).toEqual([{ field: 'lines[0].qty', message: 'must have at most 0 decimals (unit BOX)' }]);
  });
});

describe('siblingField', () => {
  it('replaces the last path segment', () => {
    expect(siblingField('lines[2].qty', 'uomId')).toBe('lines[2].uomId');
    expect(siblingField('qty', 'uomId')).toBe('uomId');
    expect(siblingField('a.b[0].qty', 'uomId')).toBe('a.b[0].uomId');
  });
});
