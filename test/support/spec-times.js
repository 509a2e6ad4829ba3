// @ts-check
/**
 * A Jest reporter: after the run, every spec file's time, slowest first, and each file against its time
 * budget (spec-budgets.js). A file over its budget fails the run (getLastError), so a spec that slowly
 * grows past what CI can afford is seen, not absorbed.
 */
const { relative } = require('node:path');
const { budgetOf } = require('./spec-budgets');

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
      const budget = budgetOf(r.file);
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
