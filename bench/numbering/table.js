#!/usr/bin/env node
'use strict';
// The Markdown table of a results file: `node bench/numbering/table.js bench/numbering/results-1.json`.
// One row per case, the runs of that case side by side (`run 1 / run 2`).

function table(results) {
  const groups = new Map();
  for (const r of results) {
    const key = `${r.case}|${r.shape}|${r.k ?? ''}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(r);
  }
  const f = (xs, g) => xs.map(g).join(' / ');
  const lines = [
    '| case | balances | k | clients | postings/s | postings per WAL flush | writing commits per WAL flush | p99 ms, pgbench transaction | p99 ms, start → numbered (B) | gap-free | load 1 min |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const rs of groups.values()) {
    const r0 = rs[0];
    if (r0.case === 'tpcb') {
      lines.push(`| pgbench TPC-B (scale 10) | — | — | ${r0.clients} | ${f(rs, (r) => Math.round(r.tps))} tps | — | ${f(rs, (r) => r.writeCommitsPerFlush)} | ${f(rs, (r) => Math.round(r.latencyP99Ms))} | — | — | ${f(rs, (r) => r.load1)} |`);
      continue;
    }
    lines.push(`| ${r0.case} | ${r0.shape} | ${r0.k ?? 1} | ${r0.clients} | ${f(rs, (r) => Math.round(r.postingsPerSec))} | ${f(rs, (r) => r.postingsPerFlush)} | ${f(rs, (r) => r.writeCommitsPerFlush)} | ${f(rs, (r) => Math.round(r.latencyP99Ms))} | ${r0.case.startsWith('sequencer') ? f(rs, (r) => Math.round(r.numberedP99Ms)) : '—'} | ${rs.every((r) => r.numbersGapFree && r.postingsCheck) ? 'yes' : 'NO'} | ${f(rs, (r) => r.load1)} |`);
  }
  return lines.join('\n');
}

module.exports = { table };

if (require.main === module) {
  const file = process.argv[2] ?? require('node:path').join(__dirname, 'results.json');
  process.stdout.write(`${table(JSON.parse(require('node:fs').readFileSync(file, 'utf8')).results)}\n`);
}
