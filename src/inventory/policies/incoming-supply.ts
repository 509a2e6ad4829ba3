import { Sql } from '../../database/sql';

/**
 * Stock on its way into a facility that the reorder suggestions count as projected (CONTRACT §5: the
 * open purchase-order quantity). Inventory does not know who supplies it: a module that has such
 * documents (procurement) provides this token globally; without one it is 0.
 *
 * `sql(itemId, facilityId)` returns a scalar SQL expression (an `sql` fragment, carrying its own
 * parameters: the current unit of work's tenant) — the quantity in the item's base unit — for the given
 * column references (code-chosen, inlined as they are), to be interpolated into the suggestions query
 * (same transaction, same tenant, row-level security as usual).
 */
export interface IncomingSupply {
  sql(itemId: string, facilityId: string): Sql;
}

export const INCOMING_SUPPLY = Symbol('IncomingSupply');

/** No supplying module: nothing is on its way. */
export const NO_INCOMING_SUPPLY: IncomingSupply = { sql: () => new Sql('0', []) };
