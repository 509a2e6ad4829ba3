import type { EntityManager } from 'typeorm';
import { prepared } from './prepared';

/**
 * Hand-written SQL as a tagged template: `sql\`SELECT … WHERE tenant_id = ${tenant} AND id = ${id}\``.
 * Every interpolated value becomes a parameter (`$n`, numbered here in order, never by hand); an
 * interpolated `Sql` (a fragment) is inlined with its own parameters renumbered; `raw()` inlines trusted
 * text (an identifier or a keyword chosen by the code, never a client's value); `join()` joins fragments.
 *
 * Why not `sql-template-tag`: it is published as an ES module only, which Jest's CommonJS runtime cannot
 * load, and a statement's text must stay the same string for its named prepared statement. Here the text
 * of a template without fragments is built once per call site (cached on the template's strings array,
 * which JavaScript keeps the same for every evaluation of one template literal), so a hot statement costs
 * no string building per call.
 *
 * Files holding such statements are named `*.sql.ts` (a test keeps it so): the rest of a module talks to
 * the database through TenantRepository (uow.repository) or its query builder with named parameters.
 */
export class Sql {
  constructor(
    /** The statement with `$n` placeholders. */
    readonly text: string,
    /** The parameters, in placeholder order. */
    readonly values: unknown[],
  ) {}
}

const RAW = Symbol('raw');
/** Trusted text inlined as it is (an identifier or keyword the code chose; never a client's value). */
export interface Raw {
  readonly [RAW]: string;
}
export const raw = (text: string): Raw => ({ [RAW]: text });
const isRaw = (v: unknown): v is Raw => typeof v === 'object' && v !== null && RAW in v;

/** The empty fragment (for an optional condition). */
export const empty = new Sql('', []);

/** What a template may interpolate: a parameter value, a fragment, or trusted raw text. */
export type SqlArg = unknown;

// Texts of templates whose interpolations are all values, by their strings array.
const texts = new WeakMap<TemplateStringsArray, string>();

export function sql(strings: TemplateStringsArray, ...args: SqlArg[]): Sql {
  let plain = true;
  for (const a of args) {
    if (a instanceof Sql || isRaw(a)) {
      plain = false;
      break;
    }
  }
  if (plain) {
    let text = texts.get(strings);
    if (text === undefined) {
      text = strings[0];
      for (let i = 1; i < strings.length; i++) text += `$${i}${strings[i]}`;
      texts.set(strings, text);
    }
    return new Sql(text, args);
  }
  const values: unknown[] = [];
  let text = strings[0];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a instanceof Sql) text += renumber(a, values);
    else if (isRaw(a)) text += a[RAW];
    else {
      values.push(a);
      text += `$${values.length}`;
    }
    text += strings[i + 1];
  }
  return new Sql(text, values);
}

/** `fragment`'s text with its placeholders moved past the `values` already taken (its values appended). */
function renumber(fragment: Sql, values: unknown[]): string {
  const offset = values.length;
  for (const v of fragment.values) values.push(v);
  if (!offset || !fragment.values.length) return fragment.text;
  return fragment.text.replace(PLACEHOLDER, (_, n: string) => `$${Number(n) + offset}`);
}
// A placeholder outside quotes: fragments come from this tag, whose literal text never holds `$<digit>`
// (a dollar-quoted body would be written with a named tag, `$body$`).
const PLACEHOLDER = /\$(\d+)/g;

/** The fragments joined by `separator` (default `, `), parameters renumbered. */
export function join(fragments: readonly Sql[], separator = ', '): Sql {
  if (!fragments.length) return empty;
  const values: unknown[] = [];
  const text = fragments.map((f) => renumber(f, values)).join(separator);
  return new Sql(text, values);
}

/** Options of `query`: run as a named prepared statement (`prepared`), with its generic plan (`generic`). */
export interface QueryOptions {
  prepared?: boolean;
  generic?: boolean;
}
/** A statement on the request path: a named prepared statement (parsed once per connection). */
export const PREPARED: QueryOptions = { prepared: true };
/** A key look-up on the request path: prepared, with its generic plan (see `prepared`). */
export { GENERIC } from './prepared';

/**
 * Runs `statement` in `m`'s transaction; answers as `EntityManager.query` does (rows; `[rows, count]` for
 * an UPDATE or DELETE).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function query<R = any>(m: EntityManager, statement: Sql, options?: QueryOptions): Promise<R> {
  const text = options?.prepared || options?.generic ? prepared(statement.text, { generic: !!options.generic }) : statement.text;
  return m.query(text, statement.values);
}
