import { validateSync } from 'class-validator';
import { IsCalendarDate, isCalendarDate, IsDateTime, isDateTime, toDate } from './dates';

describe('isDateTime', () => {
  it.each([
    '2026-02-28T10:00:00Z', '2026-02-28T10:00:00.123Z', '2026-02-28T10:00:00.123+02:00', '2026-02-28T10:00Z',
    '2026-02-28', '2024-02-29', '2024-02-29T23:59:59-05:00',
  ])('accepts %p', (value) => {
    expect(isDateTime(value)).toBe(true);
  });

  it.each([
    ['an impossible day', '2026-02-30'],
    ['an impossible day with a time', '2026-02-30T10:00:00Z'],
    ['February 29 of a common year', '2023-02-29'],
    ['a week date', '2026-W05'],
    ['a week date with a day', '2026-W05-1'],
    ['an ordinal date', '2026-032'],
    ['the basic format', '20260228'],
    ['hour 24', '2026-02-28T24:00:00Z'],
    ['free text', 'tomorrow'],
    ['a number', 1767225600000],
    ['a boolean', true],
    ['a Date', new Date()],
    ['null', null],
  ])('rejects %s', (_name, value) => {
    expect(isDateTime(value)).toBe(false);
  });
});

describe('isCalendarDate', () => {
  it.each(['2026-01-31', '2024-02-29', '2000-02-29'])('accepts %p', (value) => {
    expect(isCalendarDate(value)).toBe(true);
  });

  it.each(['2026-02-30', '1900-02-29', '2026-13-01', '2026-W01-1', '2026-032', '2026-01-31T00:00:00Z', '2026-1-31', '20260131', 20260131, null])(
    'rejects %p',
    (value) => {
      expect(isCalendarDate(value)).toBe(false);
    },
  );
});

describe('the decorators', () => {
  class Probe {
    @IsDateTime()
    at: unknown;

    @IsCalendarDate()
    day: unknown;
  }
  const messages = (at: unknown, day: unknown) =>
    validateSync(Object.assign(new Probe(), { at, day })).map((e) => [e.property, Object.values(e.constraints ?? {})]);

  it('pass valid values and name the property otherwise', () => {
    expect(messages('2026-02-28T10:00:00Z', '2026-02-28')).toEqual([]);
    expect(messages('2026-W05', '2026-W01-1')).toEqual([
      ['at', ['at must be an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z']],
      ['day', ['day must be a date YYYY-MM-DD']],
    ]);
  });
});

describe('toDate', () => {
  it('converts a string and passes null and undefined through', () => {
    expect(toDate('2026-02-28T10:00:00Z')).toEqual(new Date(Date.UTC(2026, 1, 28, 10)));
    expect(toDate(null)).toBeNull();
    expect(toDate(undefined)).toBeUndefined();
  });
});
