import type { ErrorCode } from './errors';

export interface ConstraintError {
  status: 400 | 404 | 409;
  error: ErrorCode;
  message: string;
  /** The request field a 400 names in its details, when the rule is about one field. */
  field?: string;
}

const stock = (message: string): ConstraintError => ({ status: 409, error: 'insufficient_stock', message });
const invalid = (message: string, field?: string): ConstraintError => ({ status: 400, error: 'validation_failed', message, ...(field ? { field } : {}) });
const state = (message: string): ConstraintError => ({ status: 409, error: 'invalid_state', message });

/**
 * The one map from database constraint names to the contract's errors. The service checks these rules
 * itself first and answers with details; the constraints are the database's last word, and when one
 * fires anyway (a race the code did not foresee, a rule only the database knows) its name decides the
 * answer here. A CHECK or foreign key not in this map is a 400 validation_failed with its name logged,
 * never a 500.
 */
export const CONSTRAINT_ERRORS: Record<string, ConstraintError> = {
  // Ledger invariants (CONTRACT §5).
  balance_not_negative: stock('The change would leave a balance negative'),
  balance_allocated_within_on_hand: stock('The change would leave a balance with more allocated than on hand'),
  position_counters_not_negative: stock('The change would leave the facility with negative stock counters'),
  position_not_overcommitted: stock('The change would leave the facility with less available stock than it has allocated and reserved'),
  reservation_quantities: state('The reservation cannot hold more than its quantity'),
  allocation_active_holds_stock: state('An active allocation must hold stock'),
  // Document and master-data rules.
  purchase_order_lines_over_receipt: { status: 409, error: 'over_receipt', message: 'The receipt exceeds the open quantity of the purchase order line' },
  transfer_between_facilities: invalid('A transfer order must move stock between two different facilities', 'toFacilityId'),
  reorder_policy_min_max: invalid('minQty must not exceed maxQty', 'minQty'),
  items_expiry_needs_lot: invalid("expiryTracking 'required' needs lotTracking 'required'", 'expiryTracking'),
  stock_statuses_code_format: invalid('A status code is 1 to 32 characters: A-Z, 0-9, _ or -', 'code'),
};

/** What an unmapped constraint violation answers, by SQLSTATE. */
export function unmappedConstraint(sqlState: string): ConstraintError {
  // A CHECK the service does not know is most likely a value that validation let through.
  return sqlState === '23503'
    ? invalid('A referenced record does not exist or cannot be used here')
    : invalid('A value breaks a rule of the stored data');
}
