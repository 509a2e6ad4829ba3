#!/usr/bin/env node
'use strict';
// Where a service process spent its CPU: a summary of a V8 CPU profile (`node --cpu-prof`, e.g. the bench's
// `BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof"`). Self time only (each sample counted once, in the
// function that was running), as a share of the busy time (samples that were not idle):
//   by where the code lives — the service's own code (dist/), a package (node_modules/<name>), Node's own
//   (node:*), the garbage collector, V8's own work ((program)) —, then the busiest functions.
// Usage: node bench/profile.js <file.cpuprofile> [top=25]
const { readFileSync } = require('node:fs');

const [file, topArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node bench/profile.js <file.cpuprofile> [top]\n');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8'));

// Self time per node: each sample's time delta belongs to the node it sampled.
const selfUs = new Map();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

/** Where a frame's code lives. */
function place(frame) {
  const url = frame.url || '';
  if (!url) return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  if (url.startsWith('node:')) return 'node (built-in modules)';
  const pkg = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (pkg) return pkg[1];
  if (url.includes('/dist/')) return 'service (dist/)';
  return url;
}

const byPlace = new Map();
const byFunction = new Map();
let busy = 0;
let idle = 0;
for (const node of profile.nodes) {
  const us = selfUs.get(node.id) ?? 0;
  if (!us) continue;
  const frame = node.callFrame;
  if (frame.functionName === '(idle)') {
    idle += us;
    continue;
  }
  busy += us;
  const where = place(frame);
  byPlace.set(where, (byPlace.get(where) ?? 0) + us);
  const name = `${frame.functionName || '(anonymous)'}  ${frame.url ? `${frame.url.replace(/^.*node_modules\//, '').replace(/^.*\/dist\//, 'dist/')}:${frame.lineNumber + 1}` : ''}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + us);
}

const pct = (us) => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
const total = busy + idle;
process.stdout.write(`${file}: ${(total / 1e6).toFixed(1)} s profiled, busy ${(busy / 1e6).toFixed(2)} s (${((100 * busy) / total).toFixed(0)}%), idle ${(idle / 1e6).toFixed(2)} s\n\n`);
process.stdout.write('self time by where the code lives (share of busy time)\n');
for (const [where, us] of [...byPlace].sort((a, b) => b[1] - a[1]).slice(0, 15)) process.stdout.write(`  ${pct(us)}  ${where}\n`);
process.stdout.write(`\nthe ${top} busiest functions (self time)\n`);
for (const [name, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${pct(us)}  ${name}\n`);
