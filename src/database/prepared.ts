import { createHash } from 'node:crypto';

/** What node-postgres receives for a prepared statement; `generic` is read by the unit of work (unit-of-work.ts). */
export interface PreparedConfig {
  name: string;
  text: string;
  generic: boolean;
}

// One map per plan mode, keyed by the text itself: a constant text keeps its hash (no key built per call).
const configs = { generic: new Map<string, PreparedConfig>(), custom: new Map<string, PreparedConfig>() };

/**
 * A hot statement as a named prepared statement: node-postgres parses it once per connection and
 * afterwards sends only its name and parameters. The name is derived from the text, so one name never
 * stands for two texts. Use it for fixed SQL on the request path (`m.query(prepared(SQL), params)`);
 * keep explicit column lists in it (a prepared `SELECT *` breaks when a migration adds a column).
 *
 * Parsing once is not planning once: PostgreSQL plans a prepared statement for its parameter values
 * ("custom plan") and keeps doing so whenever its plan without values looks costlier — always, for a
 * statement that reads `unnest($n::uuid[])` (10 rows estimated without the array, 1 with it). A posting's
 * statements spent more time in the planner than in the executor that way. `{ generic: true }` runs the
 * statement with its generic plan, built once per connection (and again after an ANALYZE changes the
 * statistics): the unit of work sets `plan_cache_mode = force_generic_plan` in the transaction before
 * it, with hash and merge joins off (UnitOfWork): without the values the planner guesses 10 rows for an
 * `unnest($n)` and would rather hash-join a whole small table than look its rows up. Use it for
 * statements whose every scan is a key look-up, whatever the values; leave it off for lists, whose
 * filters are optional (`$k IS NULL OR …`) and whose joins may rightly be hash joins.
 *
 * TypeORM's `query(text, params)` hands its first argument to the driver as it is, and node-postgres
 * takes a `{name, text}` config there: hence the cast.
 */
export function prepared(text: string, options: { generic?: boolean } = {}): string {
  const generic = !!options.generic;
  const byText = generic ? configs.generic : configs.custom;
  let config = byText.get(text);
  if (!config) {
    config = { name: `s_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`, text, generic };
    byText.set(text, config);
  }
  return config as unknown as string;
}

/** `prepared(text, GENERIC)`: a key look-up that runs with its generic plan. */
export const GENERIC = { generic: true } as const;

/**
 * Past this many entries in one array parameter, a statement that asks for its generic plan gets a
 * custom one instead: the generic plan assumes an `unnest` of about 10 rows and nested loops, which for
 * the arrays of a large document (1,000 lines) may join every key against every row of the tenant's
 * table (half a million comparisons per statement on a database without fresh statistics); planned with
 * the values, with hash joins allowed, it is a fraction of that. Postings of a few lines keep the
 * generic plan (no planning per execution).
 */
export const GENERIC_MAX_ARRAY = 64;

/**
 * Whether a statement handed to the driver runs with its generic plan: it asks for it
 * (`prepared(text, { generic: true })`) and none of its array parameters is larger than GENERIC_MAX_ARRAY.
 */
export function wantsGenericPlan(statement: unknown, values?: unknown): boolean {
  if (typeof statement !== 'object' || statement === null || (statement as Partial<PreparedConfig>).generic !== true) return false;
  if (!Array.isArray(values)) return true;
  for (const v of values) if (Array.isArray(v) && v.length > GENERIC_MAX_ARRAY) return false;
  return true;
}
