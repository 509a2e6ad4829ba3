import { MigrationInterface, QueryRunner } from 'typeorm';
import { APP_ROLE, AUDIT_COLUMNS, tenantPolicy } from './lib/rls';

const QTY = 'numeric(20,6)';

/**
 * Procurement: suppliers, purchase orders with their receipts, requisitions.
 *
 * Invariants held here: a line never receives more than it ordered (CHECK, the last word behind the
 * service's 409 over_receipt); one purchase-order line per line number; receipts point at the ledger
 * transaction they posted. Free-text search (`q`) on suppliers and purchase orders goes through
 * SECURITY DEFINER functions that apply the tenant policy's exact predicate, so the trigram indexes
 * serve it under row-level security (see migration ItemSearch for why ILIKE cannot otherwise use them).
 */
export class Procurement1763780000006 implements MigrationInterface {
  name = 'Procurement1763780000006';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE suppliers (
        tenant_id uuid NOT NULL REFERENCES tenants (tenant_id),
        id uuid NOT NULL,
        code text NOT NULL,
        name text NOT NULL,
        email text,
        phone text,
        address text,
        currency char(3) NOT NULL,
        is_active boolean NOT NULL DEFAULT true,
        ${AUDIT_COLUMNS},
        PRIMARY KEY (tenant_id, id),
        CONSTRAINT suppliers_code_key UNIQUE (tenant_id, code)
      );
      CREATE INDEX suppliers_list ON suppliers (tenant_id, created_at DESC, id DESC);
      CREATE INDEX suppliers_search_code ON suppliers USING gin (tenant_id, code gin_trgm_ops);
      CREATE INDEX suppliers_search_name ON suppliers USING gin (tenant_id, name gin_trgm_ops);
      ${tenantPolicy('suppliers', 'SELECT, INSERT, UPDATE')}

      CREATE TABLE purchase_orders (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        po_no text NOT NULL,
        supplier_id uuid NOT NULL,
        facility_id uuid NOT NULL,
        status text NOT NULL CHECK (status IN ('draft', 'submitted', 'approved', 'sent', 'partially_received', 'received', 'cancelled')),
        currency char(3) NOT NULL,
        order_date date NOT NULL,
        expected_date date,
        notes text,
        total_amount numeric NOT NULL DEFAULT 0,
        requisition_id uuid,
        ${AUDIT_COLUMNS},
        PRIMARY KEY (tenant_id, id),
        CONSTRAINT purchase_orders_po_no_key UNIQUE (tenant_id, po_no),
        FOREIGN KEY (tenant_id, supplier_id) REFERENCES suppliers (tenant_id, id),
        FOREIGN KEY (tenant_id, facility_id) REFERENCES facilities (tenant_id, id)
      );
      CREATE INDEX purchase_orders_list ON purchase_orders (tenant_id, created_at DESC, id DESC);
      CREATE INDEX purchase_orders_supplier ON purchase_orders (tenant_id, supplier_id);
      CREATE INDEX purchase_orders_open ON purchase_orders (tenant_id, facility_id)
        WHERE status IN ('submitted', 'approved', 'sent', 'partially_received');
      CREATE INDEX purchase_orders_search_no ON purchase_orders USING gin (tenant_id, po_no gin_trgm_ops);
      ${tenantPolicy('purchase_orders', 'SELECT, INSERT, UPDATE')}

      CREATE TABLE purchase_order_lines (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        purchase_order_id uuid NOT NULL,
        line_no integer NOT NULL CHECK (line_no > 0),
        item_id uuid NOT NULL,
        uom_id uuid NOT NULL,
        qty_ordered ${QTY} NOT NULL CHECK (qty_ordered > 0),
        unit_price numeric NOT NULL CHECK (unit_price >= 0),
        qty_received ${QTY} NOT NULL DEFAULT 0,
        -- the ordered quantity in the item's base unit (rounded up), and what receipts posted, in base units
        qty_ordered_base ${QTY} NOT NULL CHECK (qty_ordered_base > 0),
        qty_received_base ${QTY} NOT NULL DEFAULT 0 CHECK (qty_received_base >= 0),
        PRIMARY KEY (tenant_id, id),
        CONSTRAINT purchase_order_lines_no UNIQUE (tenant_id, purchase_order_id, line_no),
        CONSTRAINT purchase_order_lines_over_receipt CHECK (qty_received >= 0 AND qty_received <= qty_ordered),
        FOREIGN KEY (tenant_id, purchase_order_id) REFERENCES purchase_orders (tenant_id, id),
        FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, id),
        FOREIGN KEY (tenant_id, uom_id) REFERENCES uoms (tenant_id, id)
      );
      CREATE INDEX purchase_order_lines_item ON purchase_order_lines (tenant_id, item_id);
      ${tenantPolicy('purchase_order_lines', 'SELECT, INSERT, UPDATE, DELETE')}

      CREATE TABLE receipts (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        receipt_no text NOT NULL,
        purchase_order_id uuid NOT NULL,
        received_at timestamptz(3) NOT NULL DEFAULT now(),
        transaction_id uuid,
        notes text,
        created_by text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, id),
        CONSTRAINT receipts_receipt_no_key UNIQUE (tenant_id, receipt_no),
        FOREIGN KEY (tenant_id, purchase_order_id) REFERENCES purchase_orders (tenant_id, id),
        FOREIGN KEY (tenant_id, transaction_id) REFERENCES ledger_transactions (tenant_id, id)
      );
      CREATE INDEX receipts_order ON receipts (tenant_id, purchase_order_id, created_at DESC, id DESC);
      ${tenantPolicy('receipts', 'SELECT, INSERT')}

      CREATE TABLE receipt_lines (
        tenant_id uuid NOT NULL,
        receipt_id uuid NOT NULL,
        line_no integer NOT NULL CHECK (line_no > 0),
        po_line_id uuid NOT NULL,
        item_id uuid NOT NULL,
        qty ${QTY} NOT NULL CHECK (qty > 0),
        location_id uuid,
        lot_no text,
        expiry_date date,
        serial_nos text[],
        status_id uuid,
        PRIMARY KEY (tenant_id, receipt_id, line_no),
        FOREIGN KEY (tenant_id, receipt_id) REFERENCES receipts (tenant_id, id),
        FOREIGN KEY (tenant_id, po_line_id) REFERENCES purchase_order_lines (tenant_id, id)
      );
      ${tenantPolicy('receipt_lines', 'SELECT, INSERT')}

      CREATE TABLE requisitions (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        req_no text NOT NULL,
        facility_id uuid NOT NULL,
        status text NOT NULL CHECK (status IN ('draft', 'submitted', 'approved', 'ordered')),
        needed_by date,
        notes text,
        purchase_order_ids uuid[] NOT NULL DEFAULT '{}',
        ${AUDIT_COLUMNS},
        PRIMARY KEY (tenant_id, id),
        CONSTRAINT requisitions_req_no_key UNIQUE (tenant_id, req_no),
        FOREIGN KEY (tenant_id, facility_id) REFERENCES facilities (tenant_id, id)
      );
      CREATE INDEX requisitions_list ON requisitions (tenant_id, created_at DESC, id DESC);
      ${tenantPolicy('requisitions', 'SELECT, INSERT, UPDATE')}

      CREATE TABLE requisition_lines (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        requisition_id uuid NOT NULL,
        line_no integer NOT NULL CHECK (line_no > 0),
        item_id uuid NOT NULL,
        uom_id uuid NOT NULL,
        qty ${QTY} NOT NULL CHECK (qty > 0),
        supplier_id uuid,
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, requisition_id, line_no),
        FOREIGN KEY (tenant_id, requisition_id) REFERENCES requisitions (tenant_id, id),
        FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, id),
        FOREIGN KEY (tenant_id, uom_id) REFERENCES uoms (tenant_id, id),
        FOREIGN KEY (tenant_id, supplier_id) REFERENCES suppliers (tenant_id, id)
      );
      ${tenantPolicy('requisition_lines', 'SELECT, INSERT, UPDATE, DELETE')}

      CREATE FUNCTION supplier_search(pattern text) RETURNS TABLE (id uuid)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
      AS $$
        SELECT s.id FROM suppliers s
         WHERE s.tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid
           AND (s.code ILIKE pattern OR s.name ILIKE pattern)
      $$;
      -- Orders whose number, or whose supplier's name, matches.
      CREATE FUNCTION purchase_order_search(pattern text) RETURNS TABLE (id uuid)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
      AS $$
        SELECT o.id FROM purchase_orders o
         WHERE o.tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid AND o.po_no ILIKE pattern
        UNION
        SELECT o.id FROM purchase_orders o
         WHERE o.tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid
           AND o.supplier_id IN (SELECT s.id FROM suppliers s
                                  WHERE s.tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid AND s.name ILIKE pattern)
      $$;
      REVOKE ALL ON FUNCTION supplier_search(text) FROM PUBLIC;
      REVOKE ALL ON FUNCTION purchase_order_search(text) FROM PUBLIC;
      GRANT EXECUTE ON FUNCTION supplier_search(text) TO ${APP_ROLE};
      GRANT EXECUTE ON FUNCTION purchase_order_search(text) TO ${APP_ROLE};
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION purchase_order_search(text);
      DROP FUNCTION supplier_search(text);
      DROP TABLE requisition_lines, requisitions, receipt_lines, receipts, purchase_order_lines, purchase_orders, suppliers;
    `);
  }
}
