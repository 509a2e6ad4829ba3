// The jest environment of every spec: Node's, plus Node's own `require` for loading the compiled
// service from dist/ (NestJS 12 is ESM; Node 20 loads it via require(esm), jest's module loader cannot).
const { TestEnvironment } = require('jest-environment-node');

class ServiceEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.global.__nativeRequire = require;
  }
}

module.exports = ServiceEnvironment;
