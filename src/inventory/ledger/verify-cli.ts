import 'reflect-metadata';
import { withDatabase } from '../../database/connect';
import { INVARIANT_CHECKS, verifyLedgerReadOnly } from './verify.sql';

/**
 * `npm run ledger:verify [-- --tenant <uuid>]`: checks every ledger invariant by SQL (all tenants,
 * or one) against DATABASE_URL — usable against production, read-only. Connect as the schema owner
 * (row-level security would otherwise hide other tenants' rows). Exits 1 naming the rows on any drift.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_ROWS_SHOWN = 20;
const out = (line: string) => process.stdout.write(`${line}\n`);

async function main(argv: string[]): Promise<number> {
  const i = argv.indexOf('--tenant');
  const tenantId = i >= 0 ? argv[i + 1] : undefined;
  if (i >= 0 && !UUID.test(tenantId ?? '')) throw new Error('usage: ledger:verify [--tenant <uuid>]');

  const violations = await withDatabase((ds) => ds.transaction('REPEATABLE READ', (m) => verifyLedgerReadOnly(m, tenantId)), out);
  for (const check of INVARIANT_CHECKS) {
    const v = violations.find((x) => x.check === check.name);
    out(`${v ? 'FAIL' : 'ok  '} ${check.name}: ${check.description}${v ? ` (${v.rows.length} rows)` : ''}`);
    for (const row of v?.rows.slice(0, MAX_ROWS_SHOWN) ?? []) out(`       ${JSON.stringify(row)}`);
    if (v && v.rows.length > MAX_ROWS_SHOWN) out(`       … ${v.rows.length - MAX_ROWS_SHOWN} more`);
  }
  out(violations.length ? `ledger drift found: ${violations.length} invariant(s) broken` : 'ledger consistent: every invariant holds');
  return violations.length ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`ledger:verify failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  },
);
