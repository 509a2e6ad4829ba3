// @ts-check
/**
 * A Jest reporter: after the run, every spec file's time, slowest first, and each file against its time
 * budget. A file over its budget fails the run (getLastError), so a spec that slowly grows past what CI
 * can afford is seen, not absorbed. Budgets are generous (CI shares 2 cores with two Jest workers and
 * the database): DEFAULT_BUDGET_S for every file, more for the few that are slow by design.
 */
const { relative } = require('node:path');

const DEFAULT_BUDGET_S = 150;
/** Slow by design: what they do, and their budget in seconds. */
const BUDGETS_S = {
  'test/inventory/posting-paths.e2e-spec.ts': 300, // 2,040 generated states through both posting ways
  'test/platform/generated-input.e2e-spec.ts': 300, // thousands of generated requests on every route, on both platforms
  'test/platform/docker.e2e-spec.ts': 300, // builds the image's file tree (npm ci --omit=dev) and starts it on both platforms
  'test/platform/start-dev.e2e-spec.ts': 240, // npm run start:dev from a clean tree, twice
  'test/platform/cursor-paging.e2e-spec.ts': 240, // pages through every list route with limits 1 and 2
};

class SpecTimes {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    this.over = [];
  }

  onRunComplete(_contexts, results) {
    const rows = results.testResults
      .map((r) => ({ file: relative(this.rootDir, r.testFilePath), s: (r.perfStats.end - r.perfStats.start) / 1000, failed: r.numFailingTests > 0 || !!r.testExecError }))
      .sort((a, b) => b.s - a.s);
    const total = rows.reduce((sum, r) => sum + r.s, 0);
    const lines = rows.map((r) => {
      const budget = BUDGETS_S[r.file] ?? DEFAULT_BUDGET_S;
      if (r.s > budget) this.over.push(`${r.file}: ${r.s.toFixed(1)} s, budget ${budget} s`);
      return `${r.s.toFixed(1).padStart(7)} s  ${String(budget).padStart(4)} s budget  ${r.file}${r.s > budget ? '  OVER BUDGET' : ''}`;
    });
    process.stderr.write(`\nspec times (${rows.length} files, ${total.toFixed(0)} s of worker time), slowest first:\n${lines.join('\n')}\n`);
  }

  getLastError() {
    if (this.over.length) return new Error(`spec files over their time budget:\n${this.over.join('\n')}`);
    return undefined;
  }
}

module.exports = SpecTimes;
