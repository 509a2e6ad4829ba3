import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * One seam between the service and its HTTP platform (CONTRACT §10): only src/http/ imports Express, Fastify
 * or a @nestjs/platform-* package; guards, interceptors, filters, controllers and domain modules use the
 * neutral types and helpers of src/http/platform.ts.
 */
describe('the HTTP platform seam', () => {
  const src = join(__dirname, '..', '..', 'src');
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
  const PLATFORM_MODULE = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"](?:express|fastify|@nestjs\/platform-[\w-]+|@fastify\/[\w-]+)(?:\/[^'"]*)?['"]/m;

  it('no file outside src/http imports express, fastify or @nestjs/platform-*', () => {
    const offenders = files(src)
      .filter((f) => !relative(src, f).startsWith(`http${'/'}`))
      .filter((f) => PLATFORM_MODULE.test(readFileSync(f, 'utf8')))
      .map((f) => relative(src, f));
    expect(offenders).toEqual([]);
  });

  it('the scan sees such imports where they are (src/http/express.ts and src/http/fastify.ts)', () => {
    for (const name of ['express.ts', 'fastify.ts']) expect(PLATFORM_MODULE.test(readFileSync(join(src, 'http', name), 'utf8'))).toBe(true);
  });
});
