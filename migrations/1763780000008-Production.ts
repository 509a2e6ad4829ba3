import { MigrationInterface, QueryRunner } from 'typeorm';
import { AUDIT_COLUMNS, tenantPolicy } from './lib/rls';

const QTY = 'numeric(20,6)';

/**
 * Production: versioned bills of materials and work orders.
 *
 * Invariants held here: one active BOM version per output item (a partial unique index, so two parallel
 * activations cannot both win); version numbers unique per item; a work order's components never issue
 * more than they require.
 */
export class Production1763780000008 implements MigrationInterface {
  name = 'Production1763780000008';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE boms (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        item_id uuid NOT NULL,
        version_no integer NOT NULL CHECK (version_no > 0),
        status text NOT NULL CHECK (status IN ('draft', 'active', 'obsolete')),
        output_qty ${QTY} NOT NULL CHECK (output_qty > 0),
        notes text,
        activated_at timestamptz(3),
        ${AUDIT_COLUMNS},
        PRIMARY KEY (tenant_id, id),
        CONSTRAINT boms_item_version_key UNIQUE (tenant_id, item_id, version_no),
        FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, id)
      );
      CREATE UNIQUE INDEX boms_one_active ON boms (tenant_id, item_id) WHERE status = 'active';
      CREATE INDEX boms_list ON boms (tenant_id, created_at DESC, id DESC);
      ${tenantPolicy('boms', 'SELECT, INSERT, UPDATE')}

      CREATE TABLE bom_components (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        bom_id uuid NOT NULL,
        line_no integer NOT NULL CHECK (line_no > 0),
        item_id uuid NOT NULL,
        qty_per ${QTY} NOT NULL CHECK (qty_per > 0),
        uom_id uuid NOT NULL,
        scrap_factor numeric(9,6) NOT NULL DEFAULT 0 CHECK (scrap_factor >= 0 AND scrap_factor < 100),
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, bom_id, line_no),
        FOREIGN KEY (tenant_id, bom_id) REFERENCES boms (tenant_id, id),
        FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, id),
        FOREIGN KEY (tenant_id, uom_id) REFERENCES uoms (tenant_id, id)
      );
      CREATE INDEX bom_components_item ON bom_components (tenant_id, item_id);
      ${tenantPolicy('bom_components', 'SELECT, INSERT, UPDATE, DELETE')}

      CREATE TABLE work_orders (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        wo_no text NOT NULL,
        item_id uuid NOT NULL,
        bom_id uuid NOT NULL,
        facility_id uuid NOT NULL,
        qty_planned ${QTY} NOT NULL CHECK (qty_planned > 0),
        qty_completed ${QTY} NOT NULL DEFAULT 0 CHECK (qty_completed >= 0),
        status text NOT NULL CHECK (status IN ('draft', 'released', 'completed', 'cancelled')),
        output_location_id uuid,
        due_date date,
        transaction_id uuid,
        released_at timestamptz(3),
        completed_at timestamptz(3),
        ${AUDIT_COLUMNS},
        PRIMARY KEY (tenant_id, id),
        CONSTRAINT work_orders_wo_no_key UNIQUE (tenant_id, wo_no),
        FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, id),
        FOREIGN KEY (tenant_id, bom_id) REFERENCES boms (tenant_id, id),
        FOREIGN KEY (tenant_id, facility_id) REFERENCES facilities (tenant_id, id),
        FOREIGN KEY (tenant_id, facility_id, output_location_id) REFERENCES locations (tenant_id, facility_id, id),
        FOREIGN KEY (tenant_id, transaction_id) REFERENCES ledger_transactions (tenant_id, id)
      );
      CREATE INDEX work_orders_list ON work_orders (tenant_id, created_at DESC, id DESC);
      ${tenantPolicy('work_orders', 'SELECT, INSERT, UPDATE')}

      CREATE TABLE work_order_components (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        work_order_id uuid NOT NULL,
        line_no integer NOT NULL CHECK (line_no > 0),
        item_id uuid NOT NULL,
        qty_required ${QTY} NOT NULL CHECK (qty_required > 0),
        qty_issued ${QTY} NOT NULL DEFAULT 0,
        reservation_id uuid,
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, work_order_id, line_no),
        CONSTRAINT work_order_components_issued CHECK (qty_issued >= 0 AND qty_issued <= qty_required),
        FOREIGN KEY (tenant_id, work_order_id) REFERENCES work_orders (tenant_id, id),
        FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, id),
        FOREIGN KEY (tenant_id, reservation_id) REFERENCES reservations (tenant_id, id)
      );
      ${tenantPolicy('work_order_components', 'SELECT, INSERT, UPDATE')}
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE work_order_components, work_orders, bom_components, boms`);
  }
}
