import { MigrationInterface, QueryRunner } from 'typeorm';

const TYPES_BEFORE = `'adjustment', 'receipt', 'shipment', 'transfer_out', 'transfer_in', 'count', 'production', 'fulfillment'`;

/**
 * Ledger transactions of type `move` (POST /v1/inventory/moves, CONTRACT §9): stock moved between
 * locations and/or statuses inside one facility, as −/+ line pairs of one transaction. The type's CHECK
 * (created inline in Inventory, so named by PostgreSQL `ledger_transactions_type_check`) admits it.
 * `down` refuses while any move is in the ledger (the ledger is append-only: moves cannot be removed).
 */
export class MoveTransactions1763780000010 implements MigrationInterface {
  name = 'MoveTransactions1763780000010';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_type_check;
      ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_type_check CHECK (type IN (${TYPES_BEFORE}, 'move'));
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_type_check;
      ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_type_check CHECK (type IN (${TYPES_BEFORE}));
    `);
  }
}
