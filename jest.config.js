// Unit specs live next to the code (src/, *.spec.ts); e2e specs in test/ (*.e2e-spec.ts).
module.exports = {
  testEnvironment: '<rootDir>/test/support/environment.js',
  rootDir: '.',
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts', '**/*.e2e-spec.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: { warnOnly: false } }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 60000,
  maxWorkers: 2,
  // Every spec file's time against its budget, printed after the run (test/support/spec-times.js).
  reporters: ['default', '<rootDir>/test/support/spec-times.js'],
  // The specs slow by design start first (test/support/sequencer.js).
  testSequencer: '<rootDir>/test/support/sequencer.js',
};
