import { randomUUID } from 'node:crypto';
import type { Tenant } from '../support/app';

/** A stock item, a facility with locations, and the tenant's UOMs/statuses: the ground most inventory specs stand on. */
export async function inventoryFixture(t: Tenant, opts: { items?: Array<Record<string, unknown>>; locations?: number } = {}) {
  const uoms = (await t.get('/v1/uoms?limit=500').expect(200)).body.data as Array<{ id: string; code: string }>;
  const uom = (code: string) => uoms.find((u) => u.code === code)!.id;
  const statuses = (await t.get('/v1/inventory/statuses').expect(200)).body.data as Array<{ id: string; code: string }>;
  const status = (code: string) => statuses.find((s) => s.code === code)!.id;
  const facility = (await t.post('/v1/facilities', { code: `WH-${short()}`, name: 'Main warehouse' }).expect(201)).body.data;
  const locations: Array<{ id: string; code: string }> = [];
  for (let i = 0; i < (opts.locations ?? 2); i++) {
    locations.push((await t.post(`/v1/facilities/${facility.id}/locations`, { code: `B-${i + 1}`, name: `Bin ${i + 1}` }).expect(201)).body.data);
  }
  const items: Array<{ id: string; itemNo: string }> = [];
  for (const spec of opts.items ?? [{}]) items.push(await newItem(t, uom('EA'), spec));
  return { uom, status, facility, locations, items, item: items[0], location: locations[0] };
}

export const short = () => randomUUID().slice(0, 8);

/** A new item with a random item number (also its name) in the given base unit. */
export async function newItem(t: Tenant, baseUomId: string, spec: Record<string, unknown> = {}): Promise<{ id: string; itemNo: string }> {
  const itemNo = `IT-${short()}`;
  return (await t.post('/v1/items', { itemNo, name: itemNo, baseUomId, ...spec }).expect(201)).body.data;
}

/** Another facility with `n` locations (codes D-1, D-2, …). */
export async function facilityWithLocations(t: Tenant, n = 2) {
  const facility = (await t.post('/v1/facilities', { code: `WH-${short()}`, name: 'Second warehouse' }).expect(201)).body.data;
  const locations: Array<{ id: string; code: string }> = [];
  for (let i = 0; i < n; i++) {
    locations.push((await t.post(`/v1/facilities/${facility.id}/locations`, { code: `D-${i + 1}`, name: `Dock ${i + 1}` }).expect(201)).body.data);
  }
  return { facility, locations, location: locations[0] };
}

/** Posts an adjustment and expects `status`. */
export const adjust = (t: Tenant, body: Record<string, unknown>, status = 201) =>
  t.post('/v1/inventory/adjustments', { reason: 'test', ...body }).expect(status);
