// @ts-check
/**
 * Jest's order of spec files, with the ones slow by design (spec-budgets.js) first. Jest's own order
 * (failed last time, then slowest last time, then largest file) needs the timings of an earlier run in
 * its cache, which a fresh CI clone does not have: there it goes by file size, and a four-minute spec
 * could start last and run alone at the end while the other worker idles.
 */
const { relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;
const { budgetOf } = require('./spec-budgets');

class SlowFirst extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const budget = (test) => budgetOf(relative(test.context.config.rootDir, test.path));
    // Array.prototype.sort is stable: among equal budgets (every file not slow by design), Jest's order stands.
    return [...sorted].sort((a, b) => budget(b) - budget(a));
  }
}

module.exports = SlowFirst;
