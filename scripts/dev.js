'use strict';
// npm run start:dev: compiles src/ on every change (tsc --watch) and restarts the service when its
// compiled files change (node --watch). AUTH_MODE defaults to dev. On a restart the service drains and
// stops its embedded PostgreSQL (SIGTERM), and the new one starts it again on the same data.
const { spawn } = require('node:child_process');
const { join } = require('node:path');

const root = join(__dirname, '..');
const tsc = spawn(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--watch', '--preserveWatchOutput'], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'inherit'],
});
let service;
tsc.stdout.on('data', (chunk) => {
  const text = chunk.toString();
  process.stdout.write(text);
  // The first clean compile starts the service; later ones restart it through node --watch.
  if (!service && /Found 0 errors/.test(text)) {
    service = spawn(process.execPath, ['--watch', '--watch-preserve-output', '--max-semi-space-size=16', '--heap-growing-percent=100', 'dist/main.js'], {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, AUTH_MODE: process.env.AUTH_MODE ?? 'dev' },
    });
    service.on('exit', (code) => stop(code ?? 0));
  }
});
tsc.on('exit', (code) => stop(code ?? 0));

let stopping = false;
function stop(code) {
  if (stopping) return;
  stopping = true;
  tsc.kill('SIGTERM');
  if (service && service.exitCode === null) {
    service.once('exit', () => process.exit(code));
    service.kill('SIGTERM');
  } else process.exit(code);
}
process.once('SIGINT', () => stop(0));
process.once('SIGTERM', () => stop(0));
