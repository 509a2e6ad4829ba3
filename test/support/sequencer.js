// @ts-check
/**
 * Jest's order of spec files, with the ones slow by design (spec-budgets.js) first. Jest's own order
 * (failed last time, then slowest last time, then largest file) needs the timings of an earlier run in
 * its cache, which a fresh CI clone does not have: there it goes by file size, and a four-minute spec
 * could start last and run alone at the end while the other worker idles.
 */
const { relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;
const { BUDGETS_S } = require('./spec-budgets');

class SlowFirst extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const weight = (test) => BUDGETS_S[relative(test.context.config.rootDir, test.path)] ?? 0;
    // Array.prototype.sort is stable: among equal weights, Jest's order stands.
    return [...sorted].sort((a, b) => weight(b) - weight(a));
  }
}

module.exports = SlowFirst;
