import { given } from './fields';

describe('given', () => {
  it('is false for a field left out, JSON null and an empty list', () => {
    expect(given(undefined)).toBe(false);
    expect(given(null)).toBe(false);
    expect(given([])).toBe(false);
  });

  it('is true for any value that says something, falsy ones included', () => {
    expect(given(['S-1'])).toBe(true);
    expect(given('')).toBe(true);
    expect(given(0)).toBe(true);
    expect(given(false)).toBe(true);
    expect(given('b3c1e0a4-0000-4000-8000-000000000000')).toBe(true);
  });
});
