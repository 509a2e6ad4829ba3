import { Injectable } from '@nestjs/common';
import { query, sql } from '../../database/sql';
import { UnitOfWork } from '../../database/unit-of-work';
import { at, ItemRef } from '../../documents/references.sql';
import { checkLotExpiry, checkLotOfItem, checkNewLotExpiry } from '../../documents/tracking';

/** What a line says about its lot: an existing lot by id, or a lot number (new ones take the expiry). */
export interface LotWanted {
  item: ItemRef;
  lotId?: string | null;
  lotNo?: string | null;
  expiryDate?: string | null;
  /** Where errors point (`lines[2]`). */
  field?: string;
}

export interface FoundLot {
  id: string;
  lotNo: string;
  expiryDate: string | null;
}

/** Lots of lot-tracked items: found by id or number in one query; new numbers created on inbound postings. */
@Injectable()
export class Lots {
  constructor(private readonly uow: UnitOfWork) {}

  /**
   * The lot of each wanted line (index-aligned; null when the line names no lot). A number that does
   * not exist yet is created only when `mayCreate(i)` — an inbound line — else it is `undefined`.
   */
  async resolve(wanted: LotWanted[], mayCreate: (i: number) => boolean): Promise<Array<FoundLot | null | undefined>> {
    const byId = wanted.filter((w) => w.lotId);
    const byNo = wanted.filter((w) => !w.lotId && w.lotNo);
    if (!byId.length && !byNo.length) return wanted.map(() => null);
    const found: Array<FoundLot & { itemId: string }> = await query(
      this.uow.manager,
      sql`SELECT id, item_id AS "itemId", lot_no AS "lotNo", to_char(expiry_date, 'YYYY-MM-DD') AS "expiryDate" FROM lots
        WHERE tenant_id = ${this.uow.tenantId}
          AND (id = ANY(${byId.map((w) => w.lotId)}::uuid[])
               OR (item_id, lot_no) IN (SELECT * FROM unnest(${byNo.map((w) => w.item.id)}::uuid[], ${byNo.map((w) => w.lotNo)}::text[])))`,
    );
    const result: Array<FoundLot | null | undefined> = [];
    for (const [i, w] of wanted.entries()) {
      if (w.lotId) {
        const lot = found.find((x) => x.id === w.lotId);
        checkLotOfItem(lot, w.item, at(w.field, 'lotId'));
        checkLotExpiry(w.expiryDate, lot!.expiryDate, w.field);
        result.push(lot);
      } else if (w.lotNo) {
        const lot = found.find((x) => x.itemId === w.item.id && x.lotNo === w.lotNo);
        if (lot) checkLotExpiry(w.expiryDate, lot.expiryDate, w.field);
        result.push(lot ?? (mayCreate(i) ? await this.create(w) : undefined));
      } else result.push(null);
    }
    return result;
  }

  private async create(w: LotWanted): Promise<FoundLot> {
    checkNewLotExpiry(w.item, w.expiryDate, w.field);
    const [created]: Array<{ id: string }> = await query(
      this.uow.manager,
      sql`WITH ins AS (
         INSERT INTO lots (tenant_id, item_id, lot_no, expiry_date) VALUES (${this.uow.tenantId}, ${w.item.id}, ${w.lotNo}, ${w.expiryDate ?? null})
         ON CONFLICT (tenant_id, item_id, lot_no) DO NOTHING RETURNING id)
       SELECT id FROM ins`,
    );
    if (created) return { id: created.id, lotNo: w.lotNo!, expiryDate: w.expiryDate ?? null };
    // A concurrent posting created the same lot number and committed while this insert waited on it:
    // only a new statement (a new snapshot) sees that lot.
    const [existing]: Array<{ id: string; expiry: string | null }> = await query(
      this.uow.manager,
      sql`SELECT id, to_char(expiry_date, 'YYYY-MM-DD') AS expiry FROM lots WHERE tenant_id = ${this.uow.tenantId} AND item_id = ${w.item.id} AND lot_no = ${w.lotNo}`,
    );
    checkLotExpiry(w.expiryDate, existing.expiry, w.field);
    return { id: existing.id, lotNo: w.lotNo!, expiryDate: existing.expiry };
  }
}
