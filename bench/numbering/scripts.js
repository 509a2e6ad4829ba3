'use strict';
// pgbench scripts of the cases, generated for a batch size k. Every posting is an adjustment of one line
// (+1) on one balance, found by its full key from a balance number x (schema.sql): the balance upsert
// (INSERT … ON CONFLICT ON CONSTRAINT balances_key DO UPDATE, as Counters locks/creates them), the
// ledger header and line, and the two events the service writes with a posting (transaction.posted and
// stock.changed, both carrying txnNo). Variables: tenant, facility, status, lo, hi (balance numbers
// drawn uniformly in lo..hi), tag (written as the posting's reason: which case and run made it).

const LOT0 = "'00000000-0000-0000-0000-000000000000'::uuid";
const txnNo = (n) => `'TX-' || lpad((${n})::text, greatest(6, length((${n})::text)), '0')`;

/** The balance upsert of balance number `x` (an SQL int expression), returning the balance after the change. */
const balanceCte = (x) => `b AS (
  INSERT INTO balances AS b (tenant_id, item_id, facility_id, location_id, lot_id, status_id)
  VALUES (:tenant::uuid, md5('i' || (${x})::text)::uuid, :facility::uuid, md5('l' || ((${x}) % 100)::text)::uuid, NULL, :status::uuid)
  ON CONFLICT ON CONSTRAINT balances_key DO UPDATE SET qty_on_hand = b.qty_on_hand + 1, updated_at = now()
  RETURNING b.item_id, b.facility_id, b.location_id, b.status_id, b.qty_on_hand, b.qty_allocated)`;

/**
 * Header, line and events of the postings in CTE `k` (columns id, no — the txn number text or NULL —,
 * item_id, facility_id, location_id, status_id, qty_on_hand, qty_allocated). With `queue`, each header
 * also gets a row in ledger_unnumbered (technique B) and the events carry no txnNo.
 */
const journalCtes = (queue) => `h AS (
  INSERT INTO ledger_transactions (tenant_id, id, txn_no, type, posted_by, reason)
  SELECT :tenant::uuid, k.id, k.no, 'adjustment', 'bench-user', :tag::text FROM k
  RETURNING id, txn_no, type, posted_at),
l AS (
  INSERT INTO ledger_lines (tenant_id, transaction_id, line_no, item_id, facility_id, location_id, lot_id, status_id, qty_delta)
  SELECT :tenant::uuid, k.id, 1, k.item_id, k.facility_id, k.location_id, NULL, k.status_id, 1 FROM h JOIN k ON k.id = h.id),
${queue ? `u AS (INSERT INTO ledger_unnumbered (tenant_id, transaction_id) SELECT :tenant::uuid, h.id FROM h),\n` : ''}e AS (
  INSERT INTO events (tenant_id, type, action, subject_type, subject_id, data)
  SELECT :tenant::uuid, 'transaction.posted', h.type, 'transaction', h.id,
         jsonb_build_object('id', h.id, 'type', h.type, 'postedBy', 'bench-user', 'reason', :tag::text, 'sourceType', NULL::text, 'sourceId', NULL::uuid,
           'lines', jsonb_build_array(jsonb_build_object('lineNo', 1, 'itemId', k.item_id, 'locationId', k.location_id, 'lotId', NULL::uuid,
                                                          'statusId', k.status_id, 'qtyDelta', '1')))
         || jsonb_build_object(${queue ? '' : `'txnNo', h.txn_no, `}'postedAt', to_jsonb(h.posted_at))
    FROM h JOIN k ON k.id = h.id
  UNION ALL
  SELECT :tenant::uuid, 'stock.changed', h.type, 'item', k.item_id,
         jsonb_build_object('itemId', k.item_id, 'facilityId', k.facility_id, 'locationId', k.location_id, 'lotId', NULL::uuid, 'statusId', k.status_id,
                            'qtyDelta', '1', 'qtyOnHand', k.qty_on_hand, 'qtyAllocated', k.qty_allocated, 'transactionId', h.id,
                            ${queue ? '' : `'txnNo', h.txn_no, `}'transactionType', h.type)
    FROM h JOIN k ON k.id = h.id)`;

/** One whole posting in one statement; `number`: an SQL expression of its number, 'counter' (+1 on the counter row, as today), or null (B). */
const postingStatement = (x, number) => {
  const counter = number === 'counter';
  return `WITH ${balanceCte(x)},
${counter ? `n AS (
  INSERT INTO document_sequences AS q (tenant_id, prefix, last_value)
  SELECT :tenant::uuid, 'TX', 1 WHERE EXISTS (SELECT 1 FROM b)
  ON CONFLICT (tenant_id, prefix) DO UPDATE SET last_value = q.last_value + 1
  RETURNING q.last_value AS v),\n` : ''}k AS (
  SELECT gen_random_uuid() AS id, ${counter ? txnNo('n.v') : number === null ? 'NULL::text' : txnNo(number)} AS no, b.* FROM b${counter ? ', n' : ''}),
${journalCtes(number === null)}
SELECT count(*) FROM h;`;
};

/** The k balance numbers of a batch, drawn in lo..hi, in ascending order (the lock order: no deadlock between batches). */
const drawBatch = (k) => `SELECT array_agg(x ORDER BY x)::text AS bals
  FROM (SELECT :lo::int + floor(random() * (:hi::int - :lo::int + 1))::int AS x FROM generate_series(1, ${k})) s \\gset`;
const nth = (i) => `(:bals::int[])[${i}]`;

const scripts = {
  /** Today: the posting takes the next number (+1 on the counter row, locked until its COMMIT is flushed). */
  baseline: () => `\\set x random(:lo, :hi)
${postingStatement(':x::int', 'counter')}
`,

  /**
   * A, range taken first: one database transaction for k postings; the batch locks the counter row at
   * its start (`+ k`), each posting runs in its own savepoint as one statement with its number base + i.
   * (A posting that fails would hand its number to the next; the surplus goes back at the end, see README.)
   */
  batchFirst: (k) => `BEGIN;
${drawBatch(k)}
UPDATE document_sequences SET last_value = last_value + ${k} WHERE tenant_id = :tenant::uuid AND prefix = 'TX' RETURNING last_value - ${k} AS base \\gset
${Array.from({ length: k }, (_, i) => `SAVEPOINT p;
${postingStatement(nth(i + 1), `:base::bigint + ${i + 1}`)}
RELEASE SAVEPOINT p;`).join('\n')}
COMMIT;
`,

  /**
   * A, range taken last: one database transaction for k postings; each posting's counters change in its
   * own savepoint (the step that can fail: a shortage); then one statement takes the range (`+ k`) and
   * writes every header, line and event. The counter row is locked only from that statement to COMMIT.
   */
  batchLast: (k) => `BEGIN;
${drawBatch(k)}
${Array.from({ length: k }, (_, i) => `SAVEPOINT p;
WITH ${balanceCte(nth(i + 1))} SELECT count(*) FROM b;
RELEASE SAVEPOINT p;`).join('\n')}
WITH n AS (
  UPDATE document_sequences SET last_value = last_value + ${k} WHERE tenant_id = :tenant::uuid AND prefix = 'TX' RETURNING last_value - ${k} AS base),
p AS (SELECT i, (:bals::int[])[i] AS x FROM generate_series(1, ${k}) i),
k AS (
  SELECT gen_random_uuid() AS id, ${txnNo('n.base + p.i')} AS no, b.item_id, b.facility_id, b.location_id, b.status_id, b.qty_on_hand, b.qty_allocated
    FROM n, p JOIN balances b ON b.tenant_id = :tenant::uuid AND b.item_id = md5('i' || p.x::text)::uuid AND b.location_id = md5('l' || (p.x % 100)::text)::uuid
                             AND b.lot_key = ${LOT0} AND b.status_id = :status::uuid),
${journalCtes(false)}
SELECT count(*) FROM h;
COMMIT;
`,

  /** B, the posting: everything but the number; it commits a queue row instead (no lock on the counter). */
  unnumbered: () => `\\set x random(:lo, :hi)
${postingStatement(':x::int', null)}
`,

  /** B, the sequencer: one short statement numbering what is committed below the horizon, then a pause of :pause_us. */
  sequencer: (horizon = true) => `${sequencerSql(horizon)}
\\sleep :pause_us us
`,
};

/**
 * The sequencer statement (B): the queue rows below the snapshot's xmin horizon (every transaction with a
 * lower txid has ended, so the set is final: a later run only finds higher txids) are taken off the queue
 * and numbered in (txid, id) order from the counter row, in one transaction. It writes nothing (no WAL
 * flush) when nothing is below the horizon. Without `horizon` (case sequencerNow) it numbers every committed
 * row it sees: numbers still follow the order in which postings become visible to the sequencer (a
 * posting committed after a run's snapshot gets a higher number than every posting of that run), but
 * within one run they follow txid order, not commit order, and they no longer follow the feed's order.
 */
const sequencerSql = (horizon = true) => `WITH x AS (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS horizon),
c AS (
  DELETE FROM ledger_unnumbered u USING x WHERE u.tenant_id = :tenant::uuid${horizon ? ' AND u.xid < x.horizon' : ''}
  RETURNING u.xid, u.transaction_id),
o AS (SELECT transaction_id, row_number() OVER (ORDER BY xid, transaction_id) AS rn FROM c),
n AS (
  UPDATE document_sequences SET last_value = last_value + (SELECT count(*) FROM o)
   WHERE tenant_id = :tenant::uuid AND prefix = 'TX' AND EXISTS (SELECT 1 FROM o)
  RETURNING last_value - (SELECT count(*) FROM o) AS base),
ins AS (
  INSERT INTO ledger_numbers (tenant_id, txn_no, transaction_id)
  SELECT :tenant::uuid, ${txnNo('n.base + o.rn')}, o.transaction_id FROM n, o
  RETURNING 1)
SELECT count(*) FROM ins;`;

const SEQUENCER = sequencerSql(true);

module.exports = { scripts, SEQUENCER, sequencerSql };
