import { applyDecorators } from '@nestjs/common';
import { IsNumber, IsPositive, Max, Min, NotEquals } from 'class-validator';
import { MaxDecimals } from '../common/decimals';
import { MAX_QTY } from './quantity';

/** Most lines one document request may carry (CONTRACT §1). */
export const MAX_DOCUMENT_LINES = 1000;

/** A positive quantity: a finite number, at most 6 decimals (the UOM's decimals are checked by the ledger). */
export const Quantity = () =>
  applyDecorators(IsNumber({ allowNaN: false, allowInfinity: false }), MaxDecimals(6), IsPositive(), Max(MAX_QTY));

/** A signed quantity change, not 0 (adjustments). */
export const SignedQuantity = () =>
  applyDecorators(IsNumber({ allowNaN: false, allowInfinity: false }), MaxDecimals(6), NotEquals(0), Min(-MAX_QTY), Max(MAX_QTY));

/** A quantity >= 0: a finite number, at most 6 decimals (the UOM's decimals are checked by the service). */
export const NonNegativeQuantity = () =>
  applyDecorators(IsNumber({ allowNaN: false, allowInfinity: false }), MaxDecimals(6), Min(0), Max(MAX_QTY));
