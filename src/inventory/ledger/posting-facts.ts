import type { ItemRef, LocationRef, StatusRef } from '../../documents/references.sql';

/** What a posting line is checked against (CatalogRefs.forPosting's answer). */
export interface LineRefs {
  items: Map<string, ItemRef>;
  locations: Map<string, LocationRef>;
  statuses: StatusRef[];
}

/** At most this many items and as many locations are remembered per process (the oldest go first). */
export const MAX_REMEMBERED = 20_000;

/**
 * The master data the full posting path last checked lines against, per tenant: items and locations
 * with the versions of their rows (and of the location's facility), and the tenant's stock statuses
 * (which never change). The one-statement adjustment (DirectPostings) runs the full path's own line rules
 * (PostingLines.checkLine) on these facts, in memory, and its statement writes only while the rows still
 * have those versions: the rules are defined once, and a change of an item, location or facility sends
 * the next posting the full way, which looks them up again. Bounded (MAX_REMEMBERED); nothing here is
 * trusted without its version check in the database. (A provider without dependencies: no decorator.)
 */
export class PostingFacts {
  private readonly items = new Map<string, ItemRef>();
  private readonly locations = new Map<string, LocationRef>();
  private readonly statuses = new Map<string, StatusRef[]>();

  /** Remembers what a posting of `tenantId` was just checked against. */
  remember(tenantId: string, refs: LineRefs): void {
    for (const item of refs.items.values()) put(this.items, `${tenantId}:${item.id}`, item);
    for (const location of refs.locations.values()) put(this.locations, `${tenantId}:${location.id}`, location);
    if (!this.statuses.has(tenantId)) put(this.statuses, tenantId, refs.statuses);
  }

  /** The remembered facts for one line, or undefined when any is unknown. */
  lookup(tenantId: string, itemId: string, locationId: string): LineRefs | undefined {
    const item = this.items.get(`${tenantId}:${itemId}`);
    const location = this.locations.get(`${tenantId}:${locationId}`);
    const statuses = this.statuses.get(tenantId);
    if (!item || !location || !statuses) return undefined;
    return { items: new Map([[itemId, item]]), locations: new Map([[locationId, location]]), statuses };
  }
}

/** Sets `key` (as the newest entry) and drops the oldest entry past MAX_REMEMBERED. */
function put<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_REMEMBERED) map.delete(map.keys().next().value as string);
}
