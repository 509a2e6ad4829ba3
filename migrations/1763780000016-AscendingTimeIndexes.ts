import { MigrationInterface, QueryRunner } from 'typeorm';

/** The indexes rebuilt here, each with the columns it keeps: written on every posting, reservation or webhook attempt. */
const INDEXES: ReadonlyArray<[name: string, table: string, columns: string, where?: string]> = [
  ['ledger_transactions_posted', 'ledger_transactions', 'tenant_id, posted_at, id'],
  ['ledger_transactions_type', 'ledger_transactions', 'tenant_id, type, posted_at, id'],
  ['reservations_list', 'reservations', 'tenant_id, created_at, id'],
  ['allocations_active', 'allocations', 'tenant_id, created_at, id', "status = 'active'"],
  ['webhook_deliveries_list', 'webhook_deliveries', 'tenant_id, webhook_id, created_at, id'],
];

/**
 * Time-ordered B-trees of the append-heavy tables in ascending order.
 *
 * They were declared `created_at DESC, id DESC` (and `posted_at DESC`) to match the lists' newest-first
 * order, so every new entry went to the left-hand edge of its tenant's range. When a B-tree page fills,
 * PostgreSQL splits it in the middle unless it sees entries being appended: the index's rightmost page,
 * or a page where the new entry follows an entry with the same leading columns (a tenant's range growing
 * at its end; `_bt_afternewitemoff`). Then it leaves the left page 90% full. It never infers that for an
 * entry that goes first, so a descending time index splits every page in half, and the half that new
 * entries no longer reach stays half empty: twice the pages and twice the splits. In the adjustments
 * bench's WAL (`BENCH_WAL=1`, one tenant) the two ledger indexes split about every 55th and 83rd posting,
 * 4 kB per split record (0.12 kB of the 3.5 kB of WAL per posting); ascending, their splits fell out of the
 * ten largest WAL items. A B-tree is read backwards as cheaply as forwards: the newest-first lists and
 * their keyset cursors use the same indexes (Index Only Scan Backward).
 */
export class AscendingTimeIndexes1763780000016 implements MigrationInterface {
  name = 'AscendingTimeIndexes1763780000016';

  async up(q: QueryRunner): Promise<void> {
    for (const [name, table, columns, where] of INDEXES) {
      await q.query(`DROP INDEX ${name}; CREATE INDEX ${name} ON ${table} (${columns})${where ? ` WHERE ${where}` : ''}`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [name, table, columns, where] of INDEXES) {
      const descending = columns.replace(/, (posted_at|created_at), id$/, ', $1 DESC, id DESC');
      await q.query(`DROP INDEX ${name}; CREATE INDEX ${name} ON ${table} (${descending})${where ? ` WHERE ${where}` : ''}`);
    }
  }
}
