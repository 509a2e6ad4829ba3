import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Time-ordered ids (UUID version 7: the time in milliseconds, then random bits) for events and webhook
 * attempts, the columns' default `time_ordered_uuid()` (PostgreSQL 18's own `uuidv7()` is not in 15). An attempt's
 * row enters two unique indexes by id: its primary key (tenant, id) and (tenant, webhook, event id, attempt).
 * With random ids every attempt went into a leaf anywhere in both, and after each checkpoint every such
 * leaf's first change wrote the whole page to the WAL; with time-ordered ids new entries follow one another
 * (as the ledger's own ids do: src/common/ids.ts). Existing rows keep their ids.
 */
export class TimeOrderedEventIds1763780000019 implements MigrationInterface {
  name = 'TimeOrderedEventIds1763780000019';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION time_ordered_uuid() RETURNS uuid LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
        SELECT encode(set_bit(set_bit(
                 overlay(uuid_send(gen_random_uuid())
                         PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
                         FROM 1 FOR 6),
                 52, 1), 53, 1), 'hex')::uuid
      $$;
      COMMENT ON FUNCTION time_ordered_uuid() IS 'A UUID of version 7 (RFC 9562): 48 bits of Unix time in milliseconds, the version, 74 random bits';
      ALTER TABLE events ALTER COLUMN id SET DEFAULT time_ordered_uuid();
      ALTER TABLE webhook_deliveries ALTER COLUMN id SET DEFAULT time_ordered_uuid();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE webhook_deliveries ALTER COLUMN id DROP DEFAULT;
      ALTER TABLE events ALTER COLUMN id SET DEFAULT gen_random_uuid();
      DROP FUNCTION time_ordered_uuid();
    `);
  }
}
