import { Injectable } from '@nestjs/common';
import { AppError, invalidField } from '../../common/errors';
import { query, sql } from '../../database/sql';
import { UnitOfWork } from '../../database/unit-of-work';
import { qty as toQty } from '../../documents/quantity';
import { at } from '../../documents/references.sql';
import { shortage } from './counter-changes';
import { lineDetail, ResolvedLine } from './posting-lines';

/** Serial numbers follow their units: inbound lines put serials in stock, outbound lines take them out. */
@Injectable()
export class Serials {
  constructor(private readonly uow: UnitOfWork) {}

  async move(lines: ResolvedLine[]): Promise<void> {
    const serialLines = lines.filter((l) => l.item.serialTracked);
    // Outbound first, so a move (out of one location, into another) sees the serial leave before it arrives.
    for (const l of serialLines.filter((x) => x.qty.lt(0))) await this.takeOut(l);
    for (const l of serialLines.filter((x) => x.qty.gt(0))) await this.putIn(l);
  }

  private async takeOut(l: ResolvedLine): Promise<void> {
    const n = l.qty.abs().toNumber();
    // The serials are picked once, in a materialized CTE: as a `WHERE id IN (SELECT … LIMIT n FOR UPDATE)`
    // subquery the plan may rescan it, and a rescan skips the rows this very statement already updated
    // and takes the next ones (more than n serials out of stock for n units, seen under load).
    // Wrapped in a SELECT: TypeORM returns a bare UPDATE … RETURNING as [rows, rowCount], not rows.
    const tenantId = this.uow.tenantId;
    const serialNos = l.serialNos.length ? l.serialNos : null;
    const taken: Array<{ serial_no: string }> = await query(
      this.uow.manager,
      sql`WITH picked AS MATERIALIZED (
         SELECT id FROM serials
          WHERE tenant_id = ${tenantId} AND item_id = ${l.item.id} AND in_stock AND location_id = ${l.location.id}
            AND lot_id IS NOT DISTINCT FROM ${l.lot?.id ?? null} AND status_id = ${l.status.id}
            AND (${serialNos}::text[] IS NULL OR serial_no = ANY(${serialNos}::text[]))
          ORDER BY serial_no LIMIT ${n} FOR UPDATE),
       taken AS (
         UPDATE serials s SET in_stock = false, updated_at = now()
           FROM picked p WHERE s.tenant_id = ${tenantId} AND s.id = p.id
          RETURNING s.serial_no)
       SELECT serial_no FROM taken ORDER BY serial_no`,
    );
    if (taken.length > n) throw new Error(`took ${taken.length} serials of ${l.item.itemNo} for ${n} units`);
    if (taken.length < n) {
      const missing = l.serialNos.filter((s) => !taken.some((t) => t.serial_no === s));
      if (missing.length) throw invalidField(at(l.field, 'serialNos'), `not in stock at this location: ${missing.join(', ')}`);
      throw shortage([{ ...lineDetail(l, l.qty.abs(), toQty(taken.length)), message: `not enough serials of ${l.item.itemNo} in stock at this location` }]);
    }
    l.serialNos = taken.map((t) => t.serial_no);
  }

  private async putIn(l: ResolvedLine): Promise<void> {
    const placed: Array<{ serial_no: string }> = await query(
      this.uow.manager,
      sql`INSERT INTO serials AS s (tenant_id, item_id, serial_no, lot_id, location_id, status_id, in_stock)
       SELECT ${this.uow.tenantId}, ${l.item.id}, sn, ${l.lot?.id ?? null}, ${l.location.id}, ${l.status.id}, true FROM unnest(${l.serialNos}::text[]) AS sn
       ON CONFLICT (tenant_id, item_id, serial_no) DO UPDATE
          SET in_stock = true, lot_id = EXCLUDED.lot_id, location_id = EXCLUDED.location_id,
              status_id = EXCLUDED.status_id, updated_at = now()
        WHERE NOT s.in_stock
       RETURNING s.serial_no`,
    );
    if (placed.length < l.serialNos.length) {
      const dup = l.serialNos.filter((s) => !placed.some((p) => p.serial_no === s));
      throw new AppError(409, 'duplicate', `Serial numbers already in stock: ${dup.join(', ')}`, [
        { field: at(l.field, 'serialNos'), message: `already in stock: ${dup.join(', ')}` },
      ]);
    }
  }
}
