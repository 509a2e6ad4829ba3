import Decimal from 'decimal.js';
import { AppError } from '../common/errors';
import { qty } from './quantity';
import type { ItemRef, LotRef } from './references.sql';
import { checkBaseDecimals, checkLot, checkLotExpiry, checkLotId, checkLotOfItem, checkNewLotExpiry, checkSerials } from './tracking';
import { failure } from '../../test/support/failure';

const item = (over: Partial<ItemRef> = {}): ItemRef => ({
  id: 'item-1',
  itemNo: 'WIDGET-1',
  kind: 'stock',
  isActive: true,
  lotTracked: false,
  serialTracked: false,
  version: 1,
  expiryTracked: false,
  baseUomId: 'uom-ea',
  decimals: 0,
  ...over,
});
const PLAIN = item();
const LOTTED = item({ itemNo: 'LOT-1', lotTracked: true });
const EXPIRING = item({ itemNo: 'EXP-1', lotTracked: true, expiryTracked: true });
const SERIAL = item({ itemNo: 'SER-1', serialTracked: true });


/** 400 validation_failed with exactly one detail naming `field`. */
const expectInvalid = (err: AppError, field: string, message?: string | RegExp) => {
  expect(err).toBeInstanceOf(AppError);
  expect(err.status).toBe(400);
  expect(err.code).toBe('validation_failed');
  expect(err.details).toHaveLength(1);
  expect(err.details![0].field).toBe(field);
  expect(err.message.startsWith(`${field} `)).toBe(true);
  if (message !== undefined) {
    if (typeof message === 'string') expect(err.details![0].message).toBe(message);
    else expect(err.details![0].message).toMatch(message);
  }
};

describe('checkLot', () => {
  describe('a lot-tracked item', () => {
    it('needs a lot number or a lot id', () => {
      expectInvalid(failure(() => checkLot(LOTTED, {}, 'lines[2]')), 'lines[2].lotNo', 'is required: LOT-1 is lot-tracked');
      expectInvalid(failure(() => checkLot(LOTTED, { lotId: null, lotNo: null }, 'lines[0]')), 'lines[0].lotNo');
      expectInvalid(failure(() => checkLot(LOTTED, { lotNo: '' }, 'lines[1]')), 'lines[1].lotNo');
    });

    it('names the field the request uses for the lot', () => {
      expectInvalid(failure(() => checkLot(LOTTED, {}, 'lines[3]', 'lotId')), 'lines[3].lotId', 'is required: LOT-1 is lot-tracked');
    });

    it('without a prefix names the bare field', () => {
      expectInvalid(failure(() => checkLot(LOTTED, {}, undefined)), 'lotNo');
      expectInvalid(failure(() => checkLot(LOTTED, {}, undefined, 'lotId')), 'lotId');
    });

    it('an expiry date alone is not a lot', () => {
      expectInvalid(failure(() => checkLot(EXPIRING, { expiryDate: '2030-01-01' }, 'lines[0]')), 'lines[0].lotNo', 'is required: EXP-1 is lot-tracked');
    });

    it('accepts a lot number, a lot id, or both (and an expiry date with them)', () => {
      expect(() => checkLot(LOTTED, { lotNo: 'L-1' }, 'lines[0]')).not.toThrow();
      expect(() => checkLot(LOTTED, { lotId: 'lot-1' }, 'lines[0]')).not.toThrow();
      expect(() => checkLot(LOTTED, { lotId: 'lot-1', lotNo: 'L-1' }, 'lines[0]')).not.toThrow();
      expect(() => checkLot(EXPIRING, { lotNo: 'L-1', expiryDate: '2030-01-01' }, 'lines[0]')).not.toThrow();
    });
  });

  describe('an item that is not lot-tracked', () => {
    it('refuses a lot number', () => {
      expectInvalid(failure(() => checkLot(PLAIN, { lotNo: 'L-1' }, 'lines[2]')), 'lines[2].lotNo', 'must be empty: WIDGET-1 is not lot-tracked');
    });

    it('refuses a lot id (named by the lot field of the request)', () => {
      expectInvalid(failure(() => checkLot(PLAIN, { lotId: 'lot-1' }, 'lines[4]', 'lotId')), 'lines[4].lotId', 'must be empty: WIDGET-1 is not lot-tracked');
      expectInvalid(failure(() => checkLot(PLAIN, { lotId: 'lot-1' }, 'lines[4]')), 'lines[4].lotNo');
    });

    it('refuses an expiry date', () => {
      expectInvalid(failure(() => checkLot(PLAIN, { expiryDate: '2030-01-01' }, 'lines[1]')), 'lines[1].expiryDate', 'must be empty: WIDGET-1 is not lot-tracked');
      expectInvalid(failure(() => checkLot(PLAIN, { expiryDate: '2030-01-01' }, undefined, 'lotId')), 'expiryDate');
    });

    it('accepts no lot fields (absent, null or empty)', () => {
      expect(() => checkLot(PLAIN, {}, 'lines[0]')).not.toThrow();
      expect(() => checkLot(PLAIN, { lotId: null, lotNo: null, expiryDate: null }, 'lines[0]')).not.toThrow();
      expect(() => checkLot(PLAIN, { lotNo: '', expiryDate: '' }, 'lines[0]')).not.toThrow();
    });
  });
});

describe('checkLotOfItem', () => {
  const lot: LotRef = { id: 'lot-1', itemId: 'item-1' };

  it('returns the lot of the item', () => {
    expect(checkLotOfItem(lot, item({ id: 'item-1', lotTracked: true }), 'lines[0].lotId')).toBe(lot);
  });

  it('404 naming the field for an unknown lot', () => {
    const err = failure(() => checkLotOfItem(undefined, LOTTED, 'lines[2].lotId'));
    expect(err).toBeInstanceOf(AppError);
    expect(err.status).toBe(404);
    expect(err.code).toBe('not_found');
    expect(err.details).toEqual([{ field: 'lines[2].lotId', message: 'not found' }]);
    expect(err.message).toBe('lines[2].lotId refers to a record that does not exist');
  });

  it('400 for a lot of another item', () => {
    const err = failure(() => checkLotOfItem({ id: 'lot-9', itemId: 'item-2' }, item({ id: 'item-1', itemNo: 'LOT-1', lotTracked: true }), 'lines[1].lotId'));
    expectInvalid(err, 'lines[1].lotId', 'is a lot of another item, not of LOT-1');
  });
});

describe('checkLotId', () => {
  const lots: LotRef[] = [
    { id: 'lot-1', itemId: 'item-1' },
    { id: 'lot-2', itemId: 'item-2' },
  ];
  const mine = item({ id: 'item-1', itemNo: 'LOT-1', lotTracked: true });

  it('a lot-tracked item needs a lot id', () => {
    expectInvalid(failure(() => checkLotId(lots, undefined, mine, 'pins[1].lotId')), 'pins[1].lotId', 'is required: LOT-1 is lot-tracked');
    expectInvalid(failure(() => checkLotId(lots, null, mine, 'lotId')), 'lotId');
    expectInvalid(failure(() => checkLotId(lots, '', mine, 'lines[0].lotId')), 'lines[0].lotId');
  });

  it('an item that is not lot-tracked refuses a lot id', () => {
    expectInvalid(
      failure(() => checkLotId(lots, 'lot-1', item({ id: 'item-1' }), 'lines[3].lotId')),
      'lines[3].lotId',
      'must be empty: WIDGET-1 is not lot-tracked',
    );
  });

  it('an item that is not lot-tracked accepts no lot id', () => {
    expect(() => checkLotId(lots, undefined, PLAIN, 'lotId')).not.toThrow();
    expect(() => checkLotId(lots, null, PLAIN, 'lotId')).not.toThrow();
  });

  it('the lot must exist (404 naming the field)', () => {
    const err = failure(() => checkLotId(lots, 'lot-404', mine, 'lines[5].lotId'));
    expect(err.status).toBe(404);
    expect(err.code).toBe('not_found');
    expect(err.details![0].field).toBe('lines[5].lotId');
  });

  it('the lot must be the item’s own (400)', () => {
    expectInvalid(failure(() => checkLotId(lots, 'lot-2', mine, 'lines[0].lotId')), 'lines[0].lotId', 'is a lot of another item, not of LOT-1');
  });

  it('accepts the item’s own lot', () => {
    expect(() => checkLotId(lots, 'lot-1', mine, 'lines[0].lotId')).not.toThrow();
  });
});

describe('checkNewLotExpiry', () => {
  it('an expiry-tracked item’s new lot needs an expiry date', () => {
    expectInvalid(failure(() => checkNewLotExpiry(EXPIRING, undefined, 'lines[2]')), 'lines[2].expiryDate', 'is required for a new lot: EXP-1 is expiry-tracked');
    expectInvalid(failure(() => checkNewLotExpiry(EXPIRING, null, undefined)), 'expiryDate');
    expectInvalid(failure(() => checkNewLotExpiry(EXPIRING, '', 'lines[0]')), 'lines[0].expiryDate');
  });

  it('accepts an expiry date for an expiry-tracked item', () => {
    expect(() => checkNewLotExpiry(EXPIRING, '2030-01-01', 'lines[0]')).not.toThrow();
  });

  it('does not require one of an item that is not expiry-tracked', () => {
    expect(() => checkNewLotExpiry(LOTTED, undefined, 'lines[0]')).not.toThrow();
    expect(() => checkNewLotExpiry(PLAIN, null, 'lines[0]')).not.toThrow();
  });
});

describe('checkLotExpiry', () => {
  it('accepts the lot’s own expiry date', () => {
    expect(() => checkLotExpiry('2030-01-01', '2030-01-01', 'lines[0]')).not.toThrow();
  });

  it('accepts a line that states no expiry date', () => {
    expect(() => checkLotExpiry(undefined, '2030-01-01', 'lines[0]')).not.toThrow();
    expect(() => checkLotExpiry(null, '2030-01-01', 'lines[0]')).not.toThrow();
    expect(() => checkLotExpiry('', null, 'lines[0]')).not.toThrow();
  });

  it('refuses another date, naming the lot’s', () => {
    expectInvalid(
      failure(() => checkLotExpiry('2030-01-02', '2030-01-01', 'lines[2]')),
      'lines[2].expiryDate',
      "does not match the lot's expiry date (2030-01-01)",
    );
  });

  it('refuses a date for a lot without one, saying "none"', () => {
    expectInvalid(failure(() => checkLotExpiry('2030-01-01', null, undefined)), 'expiryDate', "does not match the lot's expiry date (none)");
  });
});

describe('checkSerials', () => {
  describe('an item that is not serial-tracked', () => {
    it('refuses serial numbers', () => {
      expectInvalid(failure(() => checkSerials(PLAIN, qty(1), ['S1'], 'lines[2]')), 'lines[2].serialNos', 'must be empty: WIDGET-1 is not serial-tracked');
    });

    it('refuses them even when picking is allowed', () => {
      expectInvalid(failure(() => checkSerials(PLAIN, qty(1), ['S1'], undefined, { mayPick: true })), 'serialNos');
    });

    it('accepts none, and any quantity (whole units are a serial rule)', () => {
      expect(checkSerials(PLAIN, qty('2.5'), undefined, 'lines[0]')).toEqual([]);
      expect(checkSerials(PLAIN, qty(3), null, 'lines[0]')).toEqual([]);
      expect(checkSerials(PLAIN, qty(3), [], 'lines[0]')).toEqual([]);
    });
  });

  describe('a serial-tracked item', () => {
    it('moves whole units only, naming the quantity field', () => {
      expectInvalid(
        failure(() => checkSerials(SERIAL, qty('1.5'), ['S1', 'S2'], 'lines[2]')),
        'lines[2].qty',
        'must be whole units: SER-1 is serial-tracked',
      );
    });

    it('names the quantity field given in options', () => {
      expectInvalid(failure(() => checkSerials(SERIAL, qty('0.5'), [], 'lines[1]', { qtyField: 'countedQty' })), 'lines[1].countedQty');
      expectInvalid(failure(() => checkSerials(SERIAL, qty('-0.5'), [], undefined, { qtyField: 'qtyDelta' })), 'qtyDelta');
    });

    it('whole units are required even when picking is allowed', () => {
      expectInvalid(failure(() => checkSerials(SERIAL, new Decimal('2.25'), undefined, 'lines[0]', { mayPick: true })), 'lines[0].qty');
    });

    it('needs one serial number per unit', () => {
      expectInvalid(
        failure(() => checkSerials(SERIAL, qty(3), ['S1', 'S2'], 'lines[2]')),
        'lines[2].serialNos',
        'must list one serial number per unit (3) of serial-tracked SER-1',
      );
      expectInvalid(failure(() => checkSerials(SERIAL, qty(1), ['S1', 'S2'], 'lines[0]')), 'lines[0].serialNos');
    });

    it('needs them when picking is not allowed', () => {
      expectInvalid(failure(() => checkSerials(SERIAL, qty(2), undefined, 'lines[1]')), 'lines[1].serialNos', /one serial number per unit \(2\)/);
      expectInvalid(failure(() => checkSerials(SERIAL, qty(2), [], 'lines[1]', { mayPick: false })), 'lines[1].serialNos');
    });

    it('refuses a repeated serial number', () => {
      expectInvalid(failure(() => checkSerials(SERIAL, qty(3), ['S1', 'S2', 'S1'], 'lines[4]')), 'lines[4].serialNos', 'must not repeat a serial number');
    });

    it('returns the serials when they fit', () => {
      expect(checkSerials(SERIAL, qty(3), ['S1', 'S2', 'S3'], 'lines[0]')).toEqual(['S1', 'S2', 'S3']);
      expect(checkSerials(SERIAL, qty('2.000'), ['A', 'B'], 'lines[0]')).toEqual(['A', 'B']);
    });

    it('mayPick allows no serials (picked when the line posts)', () => {
      expect(checkSerials(SERIAL, qty(4), undefined, 'lines[0]', { mayPick: true })).toEqual([]);
      expect(checkSerials(SERIAL, qty(4), [], 'lines[0]', { mayPick: true })).toEqual([]);
    });

    it('mayPick still checks serials that are given', () => {
      expectInvalid(failure(() => checkSerials(SERIAL, qty(4), ['S1'], 'lines[0]', { mayPick: true })), 'lines[0].serialNos', /\(4\)/);
      expectInvalid(failure(() => checkSerials(SERIAL, qty(2), ['S1', 'S1'], 'lines[0]', { mayPick: true })), 'lines[0].serialNos', 'must not repeat a serial number');
    });

    it('counts a negative quantity by its absolute value', () => {
      expect(checkSerials(SERIAL, qty(-2), ['S1', 'S2'], 'lines[0]', { qtyField: 'qtyDelta' })).toEqual(['S1', 'S2']);
      expectInvalid(
        failure(() => checkSerials(SERIAL, qty(-3), ['S1', 'S2'], 'lines[1]', { qtyField: 'qtyDelta' })),
        'lines[1].serialNos',
        'must list one serial number per unit (3) of serial-tracked SER-1',
      );
      expectInvalid(failure(() => checkSerials(SERIAL, qty(-2), ['S1', 'S1'], 'lines[1]')), 'lines[1].serialNos', 'must not repeat a serial number');
    });

    it('a zero quantity takes no serials', () => {
      expect(checkSerials(SERIAL, qty(0), [], 'lines[0]')).toEqual([]);
      expectInvalid(failure(() => checkSerials(SERIAL, qty(0), ['S1'], 'lines[0]')), 'lines[0].serialNos', /\(0\)/);
    });

    it('without a prefix names the bare fields', () => {
      expectInvalid(failure(() => checkSerials(SERIAL, qty(2), ['S1'], undefined)), 'serialNos');
      expectInvalid(failure(() => checkSerials(SERIAL, qty('1.1'), ['S1'], undefined)), 'qty');
    });
  });
});

describe('checkBaseDecimals', () => {
  const KG = item({ itemNo: 'FLOUR', decimals: 3 });

  it('accepts up to the base unit’s decimals', () => {
    expect(() => checkBaseDecimals(KG, qty('1.125'), 'lines[0].qty')).not.toThrow();
    expect(() => checkBaseDecimals(KG, qty('1.1'), 'lines[0].qty')).not.toThrow();
    expect(() => checkBaseDecimals(KG, qty('-2.5'), 'lines[0].qty')).not.toThrow();
    expect(() => checkBaseDecimals(PLAIN, qty(12), 'qty')).not.toThrow();
  });

  it('trailing zeros are not decimals', () => {
    expect(() => checkBaseDecimals(KG, qty('1.125000'), 'lines[0].qty')).not.toThrow();
    expect(() => checkBaseDecimals(PLAIN, qty('3.000000'), 'qty')).not.toThrow();
  });

  it('refuses more decimals than the base unit has, naming the field', () => {
    expectInvalid(
      failure(() => checkBaseDecimals(KG, qty('1.1251'), 'lines[2].qty')),
      'lines[2].qty',
      'must have at most 3 decimals (the base unit of FLOUR)',
    );
    expectInvalid(failure(() => checkBaseDecimals(PLAIN, qty('0.5'), 'pins[0].qty')), 'pins[0].qty', 'must have at most 0 decimals (the base unit of WIDGET-1)');
    expectInvalid(failure(() => checkBaseDecimals(KG, new Decimal('-0.0001'), 'qtyDelta')), 'qtyDelta');
  });

  it('is exact decimal arithmetic: 0.1 + 0.2 has one decimal', () => {
    const sum = qty('0.1').plus('0.2');
    expect(() => checkBaseDecimals(item({ decimals: 1 }), sum, 'qty')).not.toThrow();
    expectInvalid(failure(() => checkBaseDecimals(item({ decimals: 1 }), qty(0.1 + 0.2), 'qty')), 'qty');
  });
});
