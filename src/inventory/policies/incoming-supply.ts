/**
 * Stock on its way into a facility that the reorder suggestions count as projected (CONTRACT §5: the
 * open purchase-order quantity). Inventory does not know who supplies it: a module that has such
 * documents (procurement) provides this token globally; without one it is 0.
 *
 * `sql(itemId, facilityId, tenantId)` returns a scalar SQL expression — the quantity in the item's base
 * unit — over the given column references of the suggestions query's row (its item, facility and
 * tenant), to be evaluated inside that query (same transaction, same tenant, row-level security as
 * usual). It is inlined as text, so it carries no parameters: the tenant is the row's column.
 */
export interface IncomingSupply {
  sql(itemId: string, facilityId: string, tenantId: string): string;
}

export const INCOMING_SUPPLY = Symbol('IncomingSupply');

/** No supplying module: nothing is on its way. */
export const NO_INCOMING_SUPPLY: IncomingSupply = { sql: () => '0' };
