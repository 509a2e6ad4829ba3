import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import request from 'supertest';

/**
 * The e2e client's check of every JSON answer against the OpenAPI description of its route and status:
 * each app a spec starts registers its description (startApp), and every supertest request to that app
 * is checked when its answer arrives; a mismatch fails the request with the route, status and what
 * differs. Answers ≥ 400 are checked against the error shape (ErrorBody), routes the description does not
 * know (an unknown path's 404) too. So the description and the answers cannot drift apart.
 */
type Schema = Record<string, unknown>;
interface Doc {
  paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: Schema }> }> }>>;
  components?: { schemas?: Record<string, Schema> };
}
interface Route {
  method: string;
  pattern: RegExp;
  path: string;
  responses: Record<string, ValidateFunction | null>;
}

const apps = new Map<string, { routes: Route[]; error: ValidateFunction }>();
/**
 * Answers checked, for the spec that proves the check runs; `paused` turns the check off, for a spec that
 * measures the event loop of this process (the service's and the client's), where the client's
 * validation work would count as the service's.
 */
export const checked = { count: 0, paused: false };

/** OpenAPI 3.0 schema → JSON Schema: `nullable` becomes a null alternative; refs point into the document. */
function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'nullable' || k === 'example' || k === 'examples') continue;
    out[k] = k === '$ref' ? `openapi${v as string}` : toJsonSchema(v);
  }
  if ((node as Schema).nullable) {
    if (typeof out.type === 'string') {
      out.type = [out.type, 'null'];
      if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
      return out;
    }
    return { anyOf: [out, { type: 'null' }] };
  }
  return out;
}

/** Registers the description of the app at `base` (e.g. http://127.0.0.1:4123). */
export function registerApp(base: string, doc: Doc): void {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat('int32', true);
  ajv.addSchema({ components: toJsonSchema(doc.components ?? {}) }, 'openapi');
  const routes: Route[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`, 'i');
    for (const [method, op] of Object.entries(ops)) {
      const responses: Route['responses'] = {};
      for (const [status, r] of Object.entries(op.responses ?? {})) {
        const schema = r.content?.['application/json']?.schema;
        responses[status] = schema ? ajv.compile(toJsonSchema(schema) as object) : null;
      }
      routes.push({ method: method.toUpperCase(), pattern, path, responses });
    }
  }
  // Literal paths before templated ones (/v1/inventory/policies/suggestions before …/{id}).
  routes.sort((a, b) => Number(a.path.includes('{')) - Number(b.path.includes('{')));
  const error = ajv.compile({ $ref: 'openapi#/components/schemas/ErrorBody' });
  apps.set(base, { routes, error });
}

export function unregisterApp(base: string): void {
  apps.delete(base);
}

/** What is wrong with an answer, or undefined. */
export function problemWith(method: string, url: string, status: number, contentType: string | undefined, body: unknown): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const app = apps.get(parsed.origin);
  if (!app || !/^application\/json/.test(contentType ?? '') || method === 'HEAD') return undefined;
  let path = parsed.pathname;
  try {
    path = decodeURIComponent(path);
  } catch {
    // An undecodable path matches no route: its answer is checked as an error.
  }
  const route = app.routes.find((r) => r.method === method && r.pattern.test(path));
  let validate: ValidateFunction | null | undefined = route?.responses[String(status)];
  if (validate === undefined) {
    if (status >= 400) validate = app.error;
    else if (route) return `${method} ${route.path} answered ${status}, which its description does not list (${Object.keys(route.responses).join(', ')})`;
    else return undefined; // outside the description (e.g. /health's bare object)
  }
  checked.count++;
  if (!validate || validate(body)) return undefined;
  const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '(body)'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` "${(e.params as { additionalProperty: string }).additionalProperty}"` : ''}`);
  return `${method} ${route?.path ?? path} ${status}: the answer does not match its description: ${errors.join('; ')}\n  body: ${JSON.stringify(body).slice(0, 400)}`;
}

// Every supertest request in the process: its answer is checked before the request's own assertions.
type Answer = { status: number; headers: Record<string, string>; body: unknown } | undefined;
type Assert = (this: { method: string; url: string }, resError: unknown, res: Answer, fn: (err: unknown, res: unknown) => void) => unknown;
const Test = (request as unknown as { Test: { prototype: { assert: Assert } } }).Test;
const assert = Test.prototype.assert;
Test.prototype.assert = function (resError, res, fn) {
  if (res && !checked.paused) {
    const problem = problemWith(this.method, this.url, res.status, res.headers?.['content-type'], res.body);
    if (problem) return fn.call(this, new Error(problem), res);
  }
  return assert.call(this, resError, res, fn);
};
