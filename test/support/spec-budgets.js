// @ts-check
/**
 * Time budgets of the spec files, in seconds: what the reporter (spec-times.js) holds each file to, and
 * what the sequencer (sequencer.js) starts first. Budgets are generous (CI shares 2 cores with two Jest
 * workers and the database, and a CI machine has been seen 2.5 times slower than a quiet one):
 * DEFAULT_BUDGET_S for every file, more for the few that are slow by design.
 */
const DEFAULT_BUDGET_S = 150;

/** Slow by design: what they do, and their budget in seconds. */
const BUDGETS_S = {
  'test/inventory/posting-paths.e2e-spec.ts': 300, // 2,040 generated states through both posting ways
  'test/platform/generated-input.e2e-spec.ts': 300, // thousands of generated requests on every route, on both platforms
  'test/platform/docker.e2e-spec.ts': 300, // builds the image's file tree (npm ci --omit=dev) and starts it on both platforms
  'test/platform/start-dev.e2e-spec.ts': 240, // npm run start:dev from a clean tree, twice
  'test/platform/cursor-paging.e2e-spec.ts': 240, // pages through every list route with limits 1 and 2
};

/** A spec file's budget, by its path relative to the project's root. */
const budgetOf = (file) => BUDGETS_S[file] ?? DEFAULT_BUDGET_S;

module.exports = { budgetOf };
