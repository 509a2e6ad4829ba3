import { rmSync } from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  const db = (globalThis as { __embeddedPg?: { stop(): Promise<void> } }).__embeddedPg;
  if (!db) return;
  await db.stop();
  if (process.env.TEST_EMBEDDED_PG_DIR) rmSync(process.env.TEST_EMBEDDED_PG_DIR, { recursive: true, force: true });
}
