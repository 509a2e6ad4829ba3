import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Stored idempotent responses as `json`, not `jsonb`: `json` keeps the exact text the service sent, so a
 * replay is byte for byte the original (jsonb reorders object keys and normalises whitespace).
 */
export class IdempotencyResponses1763780000004 implements MigrationInterface {
  name = 'IdempotencyResponses1763780000004';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE idempotency_keys ALTER COLUMN response TYPE json USING response::json`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE idempotency_keys ALTER COLUMN response TYPE jsonb USING response::jsonb`);
  }
}
