import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../database/unit-of-work';
import { raw, Sql, sql } from '../database/sql';
import { IncomingSupply } from '../inventory/policies/incoming-supply';

/**
 * What procurement tells inventory's reorder suggestions: the open purchase-order quantity of an
 * (item, facility), in base units — ordered − received on orders submitted, approved, sent or
 * partially received for that facility. A line received in full counts 0 (its base quantities may
 * differ by rounding).
 */
@Injectable()
export class OpenPurchaseQuantity implements IncomingSupply {
  constructor(private readonly uow: UnitOfWork) {}

  sql(itemId: string, facilityId: string): Sql {
    return sql`coalesce((
      SELECT sum(CASE WHEN pl.qty_received >= pl.qty_ordered THEN 0 ELSE greatest(pl.qty_ordered_base - pl.qty_received_base, 0) END)
        FROM purchase_orders po
        JOIN purchase_order_lines pl ON pl.tenant_id = po.tenant_id AND pl.purchase_order_id = po.id
       WHERE po.tenant_id = ${this.uow.tenantId} AND po.facility_id = ${raw(facilityId)} AND pl.item_id = ${raw(itemId)}
         AND po.status IN ('submitted', 'approved', 'sent', 'partially_received')), 0)`;
  }
}
