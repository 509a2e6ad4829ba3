import { suggestedQty } from './reorder-math';

const s = (max: string | number, projected: string | number, multiple: string | number) => suggestedQty(max, projected, multiple).toFixed();

describe('suggestedQty', () => {
  it('is maxQty − projectedQty without an order multiple', () => {
    expect(s(100, 30, 0)).toBe('70');
    expect(s(100, 0, 0)).toBe('100');
    expect(s('10.5', '0.25', 0)).toBe('10.25');
  });

  it('rounds up to a multiple of reorderQty', () => {
    expect(s(100, 30, 25)).toBe('75'); // 70 → 3 × 25
    expect(s(100, 50, 25)).toBe('50'); // already a multiple
    expect(s(100, 99, 12)).toBe('12'); // 1 → one pack
    expect(s(10, 3, '2.5')).toBe('7.5'); // 7 → 3 × 2.5
    expect(s('1', '0.7', '0.2')).toBe('0.4'); // 0.3 → 2 × 0.2, exactly (floats give 0.30000000000000004)
  });

  it('adds a negative projection to the order', () => {
    expect(s(20, -5, 0)).toBe('25');
  });

  it('never suggests a negative quantity', () => {
    expect(s(12, 13, 0)).toBe('0');
    expect(s(12, 13, 5)).toBe('0');
  });
});
