import { createHash } from 'node:crypto';

const names = new Map<string, { name: string; text: string }>();

/**
 * A hot statement as a named prepared statement: node-postgres parses and plans it once per connection
 * and afterwards sends only its name and parameters. The name is derived from the text, so one name
 * never stands for two texts. Use it for fixed SQL on the request path (`m.query(prepared(SQL), params)`);
 * keep explicit column lists in it (a prepared `SELECT *` breaks when a migration adds a column).
 *
 * TypeORM's `query(text, params)` hands its first argument to the driver as it is, and node-postgres
 * takes a `{name, text}` config there: hence the cast.
 */
export function prepared(text: string): string {
  let config = names.get(text);
  if (!config) {
    config = { name: `s_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`, text };
    names.set(text, config);
  }
  return config as unknown as string;
}
