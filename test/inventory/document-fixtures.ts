import type { Tenant } from '../support/app';
import { short } from './fixtures';

/** ISO 8601 UTC with milliseconds. */
export const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The `sub` of the tenant's token: what createdBy/updatedBy record. */
export const subOf = (t: Tenant): string => JSON.parse(Buffer.from(t.token.split('.')[1], 'base64url').toString()).sub;

/** Another facility with `n` locations. */
export async function facilityWithLocations(t: Tenant, n = 2) {
  const facility = (await t.post('/v1/facilities', { code: `WH-${short()}`, name: 'Second warehouse' }).expect(201)).body.data;
  const locations: Array<{ id: string; code: string }> = [];
  for (let i = 0; i < n; i++) {
    locations.push((await t.post(`/v1/facilities/${facility.id}/locations`, { code: `D-${i + 1}`, name: `Dock ${i + 1}` }).expect(201)).body.data);
  }
  return { facility, locations, location: locations[0] };
}

/** A new item (EA base unless given). */
export async function newItem(t: Tenant, baseUomId: string, spec: Record<string, unknown> = {}) {
  return (await t.post('/v1/items', { itemNo: `IT-${short()}`, name: 'Thing', baseUomId, ...spec }).expect(201)).body.data as { id: string; itemNo: string };
}

export interface BalanceKey {
  itemId: string;
  locationId: string;
  lotId?: string | null;
  statusCode?: string;
}

/** On hand of one balance (default AVAILABLE, no lot); 0 when there is no row. */
export async function onHand(t: Tenant, key: BalanceKey): Promise<number> {
  const rows = (await t.get(`/v1/inventory/balances?itemId=${key.itemId}&locationId=${key.locationId}&limit=500`).expect(200)).body.data as Array<{
    lotId: string | null;
    statusCode: string;
    qtyOnHand: number;
  }>;
  const row = rows.find((r) => r.lotId === (key.lotId ?? null) && r.statusCode === (key.statusCode ?? 'AVAILABLE'));
  return row?.qtyOnHand ?? 0;
}

/** The id of an item's lot by number. */
export async function lotId(t: Tenant, itemId: string, lotNo: string): Promise<string> {
  const lots = (await t.get(`/v1/inventory/lots?itemId=${itemId}&limit=500`).expect(200)).body.data as Array<{ id: string; lotNo: string }>;
  const lot = lots.find((l) => l.lotNo === lotNo);
  if (!lot) throw new Error(`no lot ${lotNo}`);
  return lot.id;
}

/** The ledger transactions of a source document, newest first. */
export async function transactionsOf(t: Tenant, sourceId: string) {
  return (await t.get(`/v1/inventory/transactions?sourceId=${sourceId}`).expect(200)).body as {
    count: number;
    data: Array<{ type: string; sourceType: string; sourceId: string; lines: Array<{ lineNo: number; itemId: string; locationId: string; lotId: string | null; qtyDelta: number }> }>;
  };
}
