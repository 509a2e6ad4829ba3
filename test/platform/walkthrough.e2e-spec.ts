import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { testDatabaseUrl, PLATFORMS } from '../support/app';
import { startServiceProcess } from '../support/processes';

const run = promisify(execFile);

/** The README's walkthrough block, run as a new user would paste it, against the service in dev mode. */
describe.each(PLATFORMS)('README walkthrough on %s', (platform) => {
  it('runs as written and prints what the README says it prints', async () => {
    const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
    const block = readme.match(/<!-- walkthrough:start -->\n```sh\n([^]*?)\n```\n<!-- walkthrough:end -->/)![1];
    const printed = readme.slice(readme.indexOf('<!-- walkthrough:end -->')).match(/```text\n([^]*?)\n```/)![1].split('\n');
    const service = await startServiceProcess({ HTTP_PLATFORM: platform, AUTH_MODE: 'dev', DEV_TENANT_ID: randomUUID(), DATABASE_URL: testDatabaseUrl() });
    try {
      const script = block.replace('API=http://localhost:3000', `API=${service.url}`);
      expect(script).not.toBe(block);
      const { stdout } = await run('bash', ['-e', '-o', 'pipefail', '-c', script], { timeout: 60_000 });
      const lines = stdout.trim().split('\n');
      expect(lines).toHaveLength(printed.length);
      // Line by line, ids and times aside (the README shortens ids to "8 hex digits…").
      const shape = (line: string) =>
        line.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{8}-…/g, '<id>').replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>');
      expect(lines.map(shape)).toEqual(printed.map(shape));
    } finally {
      await service.stop();
    }
  });
});
