import type { FacilityRef, ItemRef, LocationRef, StatusRef } from '../../documents/references.sql';

/** What a posting line is checked against (CatalogRefs.forPosting's answer). */
export interface LineRefs {
  items: Map<string, ItemRef>;
  locations: Map<string, LocationRef>;
  statuses: StatusRef[];
}

/** At most this many items, as many locations and as many facilities are remembered per process (the oldest go first). */
export const MAX_REMEMBERED = 20_000;

/**
 * The master data the full posting path last checked lines against (or the direct ways read ahead of
 * their transaction when they did not know it: DirectPostings.plan), per tenant: items and locations
 * with the versions of their rows (and of the location's facility), and the tenant's stock statuses
 * (which never change); for new reservations, items and facilities with their versions (DirectHolds).
 * The one-statement adjustment (DirectPostings) runs the full path's own line rules
 * (PostingLines.checkLine) on these facts, in memory, and its statement writes only while the rows still
 * have those versions: the rules are defined once, and a change of an item, location or facility sends
 * the next posting the full way, which looks them up again. Bounded (MAX_REMEMBERED); nothing here is
 * trusted without its version check in the database. (A provider without dependencies: no decorator.)
 */
export class PostingFacts {
  private readonly items = new Map<string, ItemRef>();
  private readonly locations = new Map<string, LocationRef>();
  private readonly statuses = new Map<string, StatusRef[]>();
  private readonly facilities = new Map<string, FacilityRef>();

  /** Remembers what a posting of `tenantId` was just checked against. */
  remember(tenantId: string, refs: LineRefs): void {
    for (const item of refs.items.values()) put(this.items, `${tenantId}:${item.id}`, item);
    for (const location of refs.locations.values()) put(this.locations, `${tenantId}:${location.id}`, location);
    if (!this.statuses.has(tenantId)) put(this.statuses, tenantId, refs.statuses);
  }

  /** Remembers what a new reservation of `tenantId` was just checked against (DirectHolds). */
  rememberHold(tenantId: string, item: ItemRef, facility: FacilityRef): void {
    put(this.items, `${tenantId}:${item.id}`, item);
    put(this.facilities, `${tenantId}:${facility.id}`, facility);
  }

  /** The remembered item and facility of a hold, or undefined when either is unknown. */
  forHold(tenantId: string, itemId: string, facilityId: string): { item: ItemRef; facility: FacilityRef } | undefined {
    const item = this.items.get(`${tenantId}:${itemId}`);
    const facility = this.facilities.get(`${tenantId}:${facilityId}`);
    return item && facility ? { item, facility } : undefined;
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
