import { MigrationInterface, QueryRunner } from 'typeorm';
import { AUDIT_COLUMNS, tenantPolicy } from './lib/rls';

const QTY = 'numeric(20, 6)';

/**
 * The stock ledger and its counters. The database holds the invariants of CONTRACT.md §5:
 * - balances: qty_on_hand >= 0 and 0 <= qty_allocated <= qty_on_hand (invariants 2, 3);
 * - inventory_positions: per (item, facility), allocated + open reserved <= available on hand (invariant 4);
 * - ledger_transactions / ledger_lines are append-only (the app role may only SELECT and INSERT them,
 *   and a trigger refuses UPDATE/DELETE for everyone).
 */
export class Inventory1763780000002 implements MigrationInterface {
  name = 'Inventory1763780000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE stock_statuses ADD CONSTRAINT stock_statuses_code_format CHECK (code ~ '^[A-Z0-9_-]{1,32}$');

      CREATE TABLE lots (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        item_id uuid NOT NULL,
        lot_no text NOT NULL CHECK (length(lot_no) BETWEEN 1 AND 100),
        expiry_date date,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, item_id, lot_no),
        UNIQUE (tenant_id, item_id, id),
        FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, id)
      );
      ${tenantPolicy('lots', 'SELECT, INSERT')}

      CREATE TABLE balances (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        item_id uuid NOT NULL,
        facility_id uuid NOT NULL,
        location_id uuid NOT NULL,
        lot_id uuid,
        status_id uuid NOT NULL,
        qty_on_hand ${QTY} NOT NULL DEFAULT 0,
        qty_allocated ${QTY} NOT NULL DEFAULT 0,
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, id),
        CONSTRAINT balances_key UNIQUE NULLS NOT DISTINCT (tenant_id, item_id, location_id, lot_id, status_id),
        FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, id),
        FOREIGN KEY (tenant_id, facility_id, location_id) REFERENCES locations (tenant_id, facility_id, id),
        FOREIGN KEY (tenant_id, item_id, lot_id) REFERENCES lots (tenant_id, item_id, id),
        FOREIGN KEY (tenant_id, status_id) REFERENCES stock_statuses (tenant_id, id),
        CONSTRAINT balance_not_negative CHECK (qty_on_hand >= 0),
        CONSTRAINT balance_allocated_within_on_hand CHECK (qty_allocated >= 0 AND qty_allocated <= qty_on_hand)
      );
      CREATE INDEX balances_item_facility ON balances (tenant_id, item_id, facility_id);
      CREATE INDEX balances_facility ON balances (tenant_id, facility_id, item_id);
      CREATE INDEX balances_location ON balances (tenant_id, location_id);
      ${tenantPolicy('balances', 'SELECT, INSERT, UPDATE')}

      CREATE TABLE inventory_positions (
        tenant_id uuid NOT NULL,
        item_id uuid NOT NULL,
        facility_id uuid NOT NULL,
        qty_available_on_hand ${QTY} NOT NULL DEFAULT 0,
        qty_allocated ${QTY} NOT NULL DEFAULT 0,
        qty_reserved ${QTY} NOT NULL DEFAULT 0,
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, item_id, facility_id),
        FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, id),
        FOREIGN KEY (tenant_id, facility_id) REFERENCES facilities (tenant_id, id),
        CONSTRAINT position_counters_not_negative CHECK (qty_available_on_hand >= 0 AND qty_allocated >= 0 AND qty_reserved >= 0),
        CONSTRAINT position_not_overcommitted CHECK (qty_allocated + qty_reserved <= qty_available_on_hand)
      );
      ${tenantPolicy('inventory_positions', 'SELECT, INSERT, UPDATE')}

      CREATE TABLE ledger_transactions (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        txn_no text NOT NULL,
        type text NOT NULL CHECK (type IN ('adjustment', 'receipt', 'shipment', 'transfer_out', 'transfer_in', 'count', 'production', 'fulfillment')),
        posted_at timestamptz(3) NOT NULL DEFAULT now(),
        posted_by text NOT NULL,
        reason text,
        source_type text,
        source_id uuid,
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, txn_no),
        FOREIGN KEY (tenant_id) REFERENCES tenants (tenant_id)
      );
      CREATE INDEX ledger_transactions_posted ON ledger_transactions (tenant_id, posted_at DESC, id DESC);
      CREATE INDEX ledger_transactions_type ON ledger_transactions (tenant_id, type, posted_at DESC, id DESC);
      CREATE INDEX ledger_transactions_source ON ledger_transactions (tenant_id, source_id);
      ${tenantPolicy('ledger_transactions', 'SELECT, INSERT')}

      CREATE TABLE ledger_lines (
        tenant_id uuid NOT NULL,
        transaction_id uuid NOT NULL,
        line_no integer NOT NULL CHECK (line_no > 0),
        item_id uuid NOT NULL,
        facility_id uuid NOT NULL,
        location_id uuid NOT NULL,
        lot_id uuid,
        status_id uuid NOT NULL,
        qty_delta ${QTY} NOT NULL CHECK (qty_delta <> 0),
        serial_nos text[],
        PRIMARY KEY (tenant_id, transaction_id, line_no),
        FOREIGN KEY (tenant_id, transaction_id) REFERENCES ledger_transactions (tenant_id, id),
        FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, id),
        FOREIGN KEY (tenant_id, facility_id, location_id) REFERENCES locations (tenant_id, facility_id, id),
        FOREIGN KEY (tenant_id, item_id, lot_id) REFERENCES lots (tenant_id, item_id, id),
        FOREIGN KEY (tenant_id, status_id) REFERENCES stock_statuses (tenant_id, id)
      );
      CREATE INDEX ledger_lines_item ON ledger_lines (tenant_id, item_id, transaction_id);
      CREATE INDEX ledger_lines_facility ON ledger_lines (tenant_id, facility_id, transaction_id);
      CREATE INDEX ledger_lines_location ON ledger_lines (tenant_id, location_id, transaction_id);
      ${tenantPolicy('ledger_lines', 'SELECT, INSERT')}

      CREATE FUNCTION ledger_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'the stock ledger is append-only: % on % refused', TG_OP, TG_TABLE_NAME
          USING ERRCODE = 'insufficient_privilege';
      END $$;
      CREATE TRIGGER ledger_transactions_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON ledger_transactions
        FOR EACH STATEMENT EXECUTE FUNCTION ledger_is_append_only();
      CREATE TRIGGER ledger_lines_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON ledger_lines
        FOR EACH STATEMENT EXECUTE FUNCTION ledger_is_append_only();

      CREATE TABLE serials (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        item_id uuid NOT NULL,
        serial_no text NOT NULL CHECK (length(serial_no) BETWEEN 1 AND 100),
        lot_id uuid,
        location_id uuid,
        status_id uuid,
        in_stock boolean NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, item_id, serial_no),
        FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, id),
        FOREIGN KEY (tenant_id, item_id, lot_id) REFERENCES lots (tenant_id, item_id, id),
        FOREIGN KEY (tenant_id, location_id) REFERENCES locations (tenant_id, id),
        FOREIGN KEY (tenant_id, status_id) REFERENCES stock_statuses (tenant_id, id)
      );
      ${tenantPolicy('serials', 'SELECT, INSERT, UPDATE')}

      CREATE TABLE reservations (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        reservation_no text NOT NULL,
        item_id uuid NOT NULL,
        facility_id uuid NOT NULL,
        qty ${QTY} NOT NULL CHECK (qty > 0),
        qty_allocated ${QTY} NOT NULL DEFAULT 0,
        qty_fulfilled ${QTY} NOT NULL DEFAULT 0,
        status text NOT NULL CHECK (status IN ('open', 'allocated', 'released', 'cancelled', 'fulfilled')),
        demand_type text NOT NULL DEFAULT 'manual' CHECK (demand_type IN ('sales_order', 'work_order', 'transfer_order', 'manual')),
        demand_id uuid,
        demand_line_id uuid,
        expires_at timestamptz(3),
        notes text,
        ${AUDIT_COLUMNS},
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, reservation_no),
        FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, id),
        FOREIGN KEY (tenant_id, facility_id) REFERENCES facilities (tenant_id, id),
        CONSTRAINT reservation_quantities CHECK (qty_allocated >= 0 AND qty_fulfilled >= 0 AND qty_allocated + qty_fulfilled <= qty)
      );
      CREATE INDEX reservations_list ON reservations (tenant_id, created_at DESC, id DESC);
      CREATE INDEX reservations_active ON reservations (tenant_id, item_id, facility_id) WHERE status IN ('open', 'allocated');
      CREATE INDEX reservations_expiry ON reservations (tenant_id, expires_at) WHERE status IN ('open', 'allocated') AND expires_at IS NOT NULL;
      CREATE INDEX reservations_demand ON reservations (tenant_id, demand_id);
      ${tenantPolicy('reservations', 'SELECT, INSERT, UPDATE')}

      CREATE TABLE allocations (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        reservation_id uuid NOT NULL,
        balance_id uuid NOT NULL,
        item_id uuid NOT NULL,
        location_id uuid NOT NULL,
        lot_id uuid,
        qty ${QTY} NOT NULL CHECK (qty >= 0),
        qty_issued ${QTY} NOT NULL DEFAULT 0 CHECK (qty_issued >= 0),
        status text NOT NULL CHECK (status IN ('active', 'released', 'issued')),
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, id),
        FOREIGN KEY (tenant_id, reservation_id) REFERENCES reservations (tenant_id, id),
        FOREIGN KEY (tenant_id, balance_id) REFERENCES balances (tenant_id, id),
        CONSTRAINT allocation_active_holds_stock CHECK (status <> 'active' OR qty > 0)
      );
      CREATE INDEX allocations_reservation ON allocations (tenant_id, reservation_id);
      CREATE INDEX allocations_active ON allocations (tenant_id, created_at DESC, id DESC) WHERE status = 'active';
      ${tenantPolicy('allocations', 'SELECT, INSERT, UPDATE')}

      CREATE TABLE transfer_orders (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        transfer_no text NOT NULL,
        from_facility_id uuid NOT NULL,
        to_facility_id uuid NOT NULL,
        status text NOT NULL CHECK (status IN ('draft', 'shipped', 'received', 'cancelled')),
        notes text,
        shipped_at timestamptz(3),
        received_at timestamptz(3),
        ${AUDIT_COLUMNS},
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, transfer_no),
        FOREIGN KEY (tenant_id, from_facility_id) REFERENCES facilities (tenant_id, id),
        FOREIGN KEY (tenant_id, to_facility_id) REFERENCES facilities (tenant_id, id),
        CONSTRAINT transfer_between_facilities CHECK (from_facility_id <> to_facility_id)
      );
      CREATE INDEX transfer_orders_list ON transfer_orders (tenant_id, created_at DESC, id DESC);
      ${tenantPolicy('transfer_orders')}

      CREATE TABLE transfer_order_lines (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        transfer_order_id uuid NOT NULL,
        line_no integer NOT NULL CHECK (line_no > 0),
        item_id uuid NOT NULL,
        qty ${QTY} NOT NULL CHECK (qty > 0),
        from_location_id uuid NOT NULL,
        to_location_id uuid NOT NULL,
        lot_id uuid,
        serial_nos text[],
        qty_shipped ${QTY} NOT NULL DEFAULT 0,
        qty_received ${QTY} NOT NULL DEFAULT 0,
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, transfer_order_id, line_no),
        FOREIGN KEY (tenant_id, transfer_order_id) REFERENCES transfer_orders (tenant_id, id) ON DELETE CASCADE,
        FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, id),
        FOREIGN KEY (tenant_id, from_location_id) REFERENCES locations (tenant_id, id),
        FOREIGN KEY (tenant_id, to_location_id) REFERENCES locations (tenant_id, id),
        FOREIGN KEY (tenant_id, item_id, lot_id) REFERENCES lots (tenant_id, item_id, id)
      );
      ${tenantPolicy('transfer_order_lines')}

      CREATE TABLE count_sessions (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        session_no text NOT NULL,
        facility_id uuid NOT NULL,
        status text NOT NULL CHECK (status IN ('open', 'completed', 'cancelled')),
        notes text,
        transaction_id uuid,
        completed_at timestamptz(3),
        ${AUDIT_COLUMNS},
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, session_no),
        FOREIGN KEY (tenant_id, facility_id) REFERENCES facilities (tenant_id, id),
        FOREIGN KEY (tenant_id, transaction_id) REFERENCES ledger_transactions (tenant_id, id)
      );
      CREATE INDEX count_sessions_list ON count_sessions (tenant_id, created_at DESC, id DESC);
      ${tenantPolicy('count_sessions')}

      CREATE TABLE count_lines (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        session_id uuid NOT NULL,
        item_id uuid NOT NULL,
        location_id uuid NOT NULL,
        lot_no text,
        lot_id uuid,
        counted_qty ${QTY} NOT NULL CHECK (counted_qty >= 0),
        system_qty ${QTY},
        variance_qty ${QTY},
        counted_by text NOT NULL,
        counted_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, id),
        CONSTRAINT count_lines_key UNIQUE NULLS NOT DISTINCT (tenant_id, session_id, item_id, location_id, lot_no),
        FOREIGN KEY (tenant_id, session_id) REFERENCES count_sessions (tenant_id, id) ON DELETE CASCADE,
        FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, id),
        FOREIGN KEY (tenant_id, location_id) REFERENCES locations (tenant_id, id),
        FOREIGN KEY (tenant_id, item_id, lot_id) REFERENCES lots (tenant_id, item_id, id)
      );
      ${tenantPolicy('count_lines')}

      CREATE TABLE reorder_policies (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        item_id uuid NOT NULL,
        facility_id uuid NOT NULL,
        min_qty ${QTY} NOT NULL CHECK (min_qty >= 0),
        max_qty ${QTY} NOT NULL CHECK (max_qty >= 0),
        safety_stock ${QTY} NOT NULL DEFAULT 0 CHECK (safety_stock >= 0),
        reorder_qty ${QTY} NOT NULL DEFAULT 0 CHECK (reorder_qty >= 0),
        lead_time_days integer NOT NULL DEFAULT 0 CHECK (lead_time_days >= 0),
        is_active boolean NOT NULL DEFAULT true,
        ${AUDIT_COLUMNS},
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, item_id, facility_id),
        FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, id),
        FOREIGN KEY (tenant_id, facility_id) REFERENCES facilities (tenant_id, id),
        CONSTRAINT reorder_policy_min_max CHECK (min_qty <= max_qty)
      );
      CREATE INDEX reorder_policies_list ON reorder_policies (tenant_id, created_at DESC, id DESC);
      ${tenantPolicy('reorder_policies')}
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE reorder_policies, count_lines, count_sessions, transfer_order_lines, transfer_orders,
        allocations, reservations, serials, ledger_lines, ledger_transactions, inventory_positions, balances, lots;
      DROP FUNCTION ledger_is_append_only();
      ALTER TABLE stock_statuses DROP CONSTRAINT stock_statuses_code_format;
    `);
  }
}
