import type { EntityMetadata } from 'typeorm';

/** Per entity: its columns' property names, and whether each is numeric (sent as a JSON number). */
const plans = new WeakMap<EntityMetadata, Array<[property: string, numeric: boolean]>>();

/**
 * The response record of an entity row: every column of the entity (by its property name) except
 * `tenantId` and those in `omit`, numeric columns as JSON numbers (numeric(20,6) comes back from pg as a
 * string; every quantity and amount of the contract is a number). Relations are not columns: a caller adds
 * them (e.g. a document's `lines`).
 *
 * This is what makes a new column reach the answer without a hand-written mapping: add it to the
 * migration and the entity, and it is in the record; the response class must then list it, or the
 * closed OpenAPI schema and the test of resources' fields (test/platform/resource-fields) fail.
 */
export function recordOf<T extends object>(metadata: EntityMetadata, row: T, omit: readonly string[] = []): Record<string, unknown> {
  let plan = plans.get(metadata);
  if (!plan) {
    plan = metadata.columns.map((c) => [c.propertyName, c.type === 'numeric']);
    plans.set(metadata, plan);
  }
  const out: Record<string, unknown> = {};
  const values = row as Record<string, unknown>;
  for (const [property, numeric] of plan) {
    if (property === 'tenantId' || omit.includes(property)) continue;
    const v = values[property];
    out[property] = numeric && v !== null && v !== undefined ? Number(v) : v;
  }
  return out;
}
