import type { Tenant } from '../support/app';

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
