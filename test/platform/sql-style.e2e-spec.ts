import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(__dirname, '..', '..');

/** Every .ts file of src/ except unit specs, with its code stripped of comments. */
function sources(): Array<{ file: string; code: string }> {
  const out: Array<{ file: string; code: string }> = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts') && !name.endsWith('.spec.ts')) {
        const code = readFileSync(path, 'utf8')
          .replace(/\/\*[^]*?\*\//g, '')
          .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
        out.push({ file: relative(root, path), code });
      }
    }
  };
  walk(join(root, 'src'));
  return out;
}

const isSqlFile = (file: string) => file.endsWith('.sql.ts') || file.startsWith('src/database/');

/** Where hand-written SQL may live, and how it is written (docs/architecture.md, "SQL"). */
describe('hand-written SQL', () => {
  const files = sources();

  it('has no hand-numbered placeholder ($1, $2…) anywhere in src/', () => {
    const found = files.flatMap(({ file, code }) => [...code.matchAll(/\$\d+/g)].map((m) => `${file}: ${code.slice(Math.max(0, m.index - 40), m.index + 10).replace(/\s+/g, ' ')}`));
    expect(found).toEqual([]);
  });

  it('is written with the sql tag only in files named *.sql.ts (or the database layer)', () => {
    const found = files.filter(({ file, code }) => /\bsql`/.test(code) && !isSqlFile(file)).map((f) => f.file);
    expect(found).toEqual([]);
  });

  it('reaches the driver (.query) only from *.sql.ts files and the database layer', () => {
    const found = files.filter(({ file, code }) => /\.query(<[^>]*>)?\(/.test(code) && !isSqlFile(file)).map((f) => f.file);
    expect(found).toEqual([]);
  });

  it('prepares statements only through the sql layer (query(…, PREPARED | GENERIC))', () => {
    const found = files.filter(({ file, code }) => /\bprepared\(/.test(code) && !file.startsWith('src/database/')).map((f) => f.file);
    expect(found).toEqual([]);
  });

  it('the rules can fail: a placeholder and a misplaced statement are found', () => {
    expect(/\$\d+/.test('WHERE id = $2')).toBe(true);
    expect(/\.query(<[^>]*>)?\(/.test('m.query<Row[]>(text)')).toBe(true);
    expect(isSqlFile('src/sales/sales-orders.service.ts')).toBe(false);
  });
});
