import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
/** Lines without their indentation, blank lines dropped: snippets may be dedented. */
const normal = (text: string) => text.split('\n').map((l) => l.trim()).filter(Boolean);

/** docs/extending.md: every snippet is still in the source file it names, line for line. */
describe('docs/extending.md', () => {
  it('every snippet appears, as a run of consecutive lines, in the file it says it is from', () => {
    const doc = readFileSync(join(root, 'docs', 'extending.md'), 'utf8');
    const snippets = [...doc.matchAll(/<!-- from: (\S+) -->\n```ts\n([^]*?)\n```/g)].map((m) => ({ file: m[1], code: m[2] }));
    expect(snippets.length).toBeGreaterThanOrEqual(8);
    for (const { file, code } of snippets) {
      const source = normal(readFileSync(join(root, file), 'utf8'));
      const wanted = normal(code);
      const at = source.findIndex((_, i) => wanted.every((line, j) => source[i + j] === line));
      expect({ file, first: wanted[0], found: at >= 0 }).toEqual({ file, first: wanted[0], found: true });
    }
  });
});
