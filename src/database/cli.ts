import 'reflect-metadata';
import { existsSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { DataSource } from 'typeorm';
import { SettingsError } from '../config/settings';
import { withDatabase } from './connect';
import { revertLastMigration, runMigrations } from './migrate';

/**
 * Migration CLI (npm run migration:run | migration:revert | migration:generate <Name>).
 * Connects like the service: DATABASE_URL, or the embedded PostgreSQL when it is unset.
 */
const USAGE = 'usage: node dist/database/cli.js run | revert | generate <Name>';

class UsageError extends Error {}

const out = (line: string) => process.stdout.write(`${line}\n`);

async function main(argv: string[]): Promise<void> {
  const [command, name] = argv;
  if (command !== 'run' && command !== 'revert' && command !== 'generate') throw new UsageError(USAGE);
  if (command === 'generate' && !/^[A-Z][A-Za-z0-9]*$/.test(name ?? ''))
    throw new UsageError(`generate needs a PascalCase migration name, e.g. "AddItemBarcode"\n${USAGE}`);

  await withDatabase(async (dataSource) => {
    if (command === 'run') await run(dataSource);
    else if (command === 'revert') await revert(dataSource);
    else await generate(dataSource, name as string);
  }, out);
}

async function run(dataSource: DataSource): Promise<void> {
  const names = await runMigrations(dataSource);
  if (!names.length) out('no pending migrations');
  for (const name of names) out(`migrated: ${name}`);
}

async function revert(dataSource: DataSource): Promise<void> {
  const name = await revertLastMigration(dataSource);
  out(name ? `reverted: ${name}` : 'no migration to revert');
}

/** Writes migrations/<timestamp>-<Name>.ts with the SQL that brings the schema to the entities, for hand review. */
async function generate(dataSource: DataSource, name: string): Promise<void> {
  if (await dataSource.showMigrations())
    throw new Error('the database has pending migrations: run `npm run migration:run` first, then generate');
  const sql = await dataSource.driver.createSchemaBuilder().log();
  if (!sql.upQueries.length) {
    out('no changes: the entities match the database schema');
    return;
  }
  const dir = resolve('migrations');
  if (!existsSync(dir)) throw new Error(`no migrations/ folder in ${process.cwd()}: run the CLI from the project root`);
  const timestamp = Date.now();
  const file = join(dir, `${timestamp}-${name}.ts`);
  // The schema builder's down queries undo its up queries one by one, so they run in reverse.
  writeFileSync(file, migrationSource(`${name}${timestamp}`, sql.upQueries, [...sql.downQueries].reverse()));
  out(`wrote ${relative(process.cwd(), file)} (${sql.upQueries.length} statements): review it before running it`);
  const drops = sql.upQueries.filter((s) => /\bDROP\b/i.test(s.query)).length;
  if (drops) out(`${drops} of them drop something: keys, CHECKs and defaults that live only in migrations show up as drops; delete those`);
}

interface Statement {
  query: string;
  parameters?: unknown[];
}

function migrationSource(className: string, up: Statement[], down: Statement[]): string {
  const body = (statements: Statement[]) =>
    statements
      .map((s) => {
        const params = s.parameters?.length ? `, ${JSON.stringify(s.parameters)}` : '';
        return `    await q.query(\`${s.query.replace(/\\/g, '\\\\').replace(/`/g, '\\`').replace(/\$\{/g, '\\${')}\`${params});`;
      })
      .join('\n');
  return `import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Generated from the entities by \`npm run migration:generate\`: review before committing. The entities do not
 * model the composite keys, foreign keys, CHECKs, defaults and RLS policies that live in the migrations, so the
 * generator proposes dropping them: delete those statements; add keys, RLS (migrations/lib/rls.ts) and grants.
 */
export class ${className} implements MigrationInterface {
  name = '${className}';

  async up(q: QueryRunner): Promise<void> {
${body(up)}
  }

  async down(q: QueryRunner): Promise<void> {
${body(down)}
  }
}
`;
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (err: unknown) => {
    const message = err instanceof UsageError || err instanceof SettingsError ? err.message
      : `migration ${process.argv[2]} failed: ${err instanceof Error ? err.message : String(err)}`;
    process.stderr.write(`${message}\n`);
    process.exit(1);
  },
);
