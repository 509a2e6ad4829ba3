import { roundUp } from '../documents/quantity';
import { explode } from './bom-explosion';

describe('explode', () => {
  it('is exact where the true quantity is: no tail for rounding up to turn into one more unit of the last decimal', () => {
    // 1 × 1 / 6 × 1.5 = 0.25 and 1 × 1 / 6 × 3 = 0.5 exactly (dividing first gave 0.2500…01 and 0.5000…01)
    expect(explode({ qtyPer: 1, scrapFactor: '0.5' }, 1, 6, 1).toFixed()).toBe('0.25');
    expect(explode({ qtyPer: 1, scrapFactor: 0 }, 1, 6, 3).toFixed()).toBe('0.5');
    expect(roundUp(explode({ qtyPer: 1, scrapFactor: '0.5' }, 1, 6, 1), 3).toFixed()).toBe('0.25');
    expect(roundUp(explode({ qtyPer: '0.1', scrapFactor: '0.2' }, 7, 3, 12), 0).toFixed()).toBe('4');
  });

  it('keeps a true tail, which rounding up then covers', () => {
    // 1 × 1 / 3 = 0.333… → 0.334 with 3 decimals; 3 × 5 / 2 × 1.1 = 8.25 → 9 whole units
    expect(roundUp(explode({ qtyPer: 1, scrapFactor: 0 }, 1, 3, 1), 3).toFixed()).toBe('0.334');
    expect(roundUp(explode({ qtyPer: 3, scrapFactor: '0.1' }, 5, 2, 1), 0).toFixed()).toBe('9');
  });
});
