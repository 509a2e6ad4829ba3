-- The tables a ledger posting writes, as the migrations define them (1763780000002-Inventory,
-- 1763780000009-BalanceLotKey, 1763780000010-MoveTransactions, 1763780000011-Events), without row-level
-- security and without the foreign keys to master data (items, locations, lots, statuses, tenants), whose
-- key-share checks are the same in every case measured here. The ledger line keeps its foreign key to its
-- header. Plus, for technique B only: the queue of committed postings still without a number, and the
-- numbers the sequencer assigns (the ledger stays append-only: no header is updated).

CREATE TABLE document_sequences (
  tenant_id uuid NOT NULL,
  prefix text NOT NULL,
  last_value bigint NOT NULL,
  PRIMARY KEY (tenant_id, prefix)
);

CREATE TABLE balances (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  item_id uuid NOT NULL,
  facility_id uuid NOT NULL,
  location_id uuid NOT NULL,
  lot_id uuid,
  status_id uuid NOT NULL,
  qty_on_hand numeric(20, 6) NOT NULL DEFAULT 0,
  qty_allocated numeric(20, 6) NOT NULL DEFAULT 0,
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  lot_key uuid NOT NULL GENERATED ALWAYS AS (coalesce(lot_id, '00000000-0000-0000-0000-000000000000'::uuid)) STORED,
  PRIMARY KEY (tenant_id, id),
  CONSTRAINT balances_key UNIQUE (tenant_id, item_id, location_id, lot_key, status_id),
  CONSTRAINT balance_not_negative CHECK (qty_on_hand >= 0),
  CONSTRAINT balance_allocated_within_on_hand CHECK (qty_allocated >= 0 AND qty_allocated <= qty_on_hand)
);
CREATE INDEX balances_item_facility ON balances (tenant_id, item_id, facility_id);
CREATE INDEX balances_facility ON balances (tenant_id, facility_id, item_id);
CREATE INDEX balances_location ON balances (tenant_id, location_id);

CREATE TABLE ledger_transactions (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  txn_no text,            -- NOT NULL in the service; null here for technique B (its number is in ledger_numbers)
  type text NOT NULL CHECK (type IN ('adjustment', 'receipt', 'shipment', 'transfer_out', 'transfer_in', 'count', 'production', 'fulfillment', 'move')),
  posted_at timestamptz(3) NOT NULL DEFAULT now(),
  posted_by text NOT NULL,
  reason text,
  source_type text,
  source_id uuid,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, txn_no)
);
CREATE INDEX ledger_transactions_posted ON ledger_transactions (tenant_id, posted_at DESC, id DESC);
CREATE INDEX ledger_transactions_type ON ledger_transactions (tenant_id, type, posted_at DESC, id DESC);
CREATE INDEX ledger_transactions_source ON ledger_transactions (tenant_id, source_id);

CREATE TABLE ledger_lines (
  tenant_id uuid NOT NULL,
  transaction_id uuid NOT NULL,
  line_no integer NOT NULL CHECK (line_no > 0),
  item_id uuid NOT NULL,
  facility_id uuid NOT NULL,
  location_id uuid NOT NULL,
  lot_id uuid,
  status_id uuid NOT NULL,
  qty_delta numeric(20, 6) NOT NULL CHECK (qty_delta <> 0),
  serial_nos text[],
  PRIMARY KEY (tenant_id, transaction_id, line_no),
  FOREIGN KEY (tenant_id, transaction_id) REFERENCES ledger_transactions (tenant_id, id)
);
CREATE INDEX ledger_lines_item ON ledger_lines (tenant_id, item_id, transaction_id);
CREATE INDEX ledger_lines_facility ON ledger_lines (tenant_id, facility_id, transaction_id);
CREATE INDEX ledger_lines_location ON ledger_lines (tenant_id, location_id, transaction_id);

CREATE TABLE events (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  txid bigint NOT NULL DEFAULT (pg_current_xact_id()::text::bigint),
  seq bigint GENERATED ALWAYS AS IDENTITY,
  type text NOT NULL CHECK (type ~ '^[a-z_]+\.[a-z_]+$'),
  action text NOT NULL,
  subject_type text NOT NULL,
  subject_id uuid NOT NULL,
  data jsonb NOT NULL,
  occurred_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT events_feed PRIMARY KEY (tenant_id, txid, seq)
);
CREATE INDEX events_age ON events USING brin (occurred_at);

-- Technique B: a posting commits a queue row (its own txid) instead of taking a number; the sequencer
-- deletes the rows below the snapshot's xmin horizon and numbers them in (txid, id) order.
CREATE TABLE ledger_unnumbered (
  tenant_id uuid NOT NULL,
  xid bigint NOT NULL DEFAULT (pg_current_xact_id()::text::bigint),
  transaction_id uuid NOT NULL,
  PRIMARY KEY (tenant_id, xid, transaction_id)
);
CREATE TABLE ledger_numbers (
  tenant_id uuid NOT NULL,
  txn_no text NOT NULL,
  transaction_id uuid NOT NULL,
  numbered_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant_id, txn_no),
  UNIQUE (tenant_id, transaction_id)
);

-- One tenant: 10,000 balances spread over 10,000 items and 100 locations of one facility (numbers 1..10,000),
-- the 5 hot ones being numbers 1..5. Item and location ids are md5 UUIDs of their numbers, so a script
-- finds a balance by its full key from a number (the service looks balances up by that key too).
INSERT INTO document_sequences VALUES ('11111111-1111-1111-1111-111111111111', 'TX', 0);
INSERT INTO balances (tenant_id, item_id, facility_id, location_id, status_id, qty_on_hand)
SELECT '11111111-1111-1111-1111-111111111111', md5('i' || n)::uuid, '22222222-2222-2222-2222-222222222222',
       md5('l' || (n % 100))::uuid, '33333333-3333-3333-3333-333333333333', 1000000
  FROM generate_series(1, 10000) n;
ANALYZE;
