'use strict';
// The webhook scenario's receiver, in a process of its own (`node bench/receiver.js`, forked by bench/run.js):
// an HTTP server on loopback that answers every POST 204 and keeps, per delivery, its webhook-id and its lag
// (arrival less the event's occurredAt). A receiver runs on another machine in production; here it shares
// the 2 cores, but not the event loop of the load generator (autocannon, in bench/run.js), whose requests it
// would otherwise delay. Over IPC: {cmd: 'reset'} clears what it kept; {cmd: 'count'} answers the distinct
// webhook-ids received; {cmd: 'report'} answers them with the lags, the repeats and its own CPU time.
const { createServer } = require('node:http');

let deliveries = [];
let ids = new Set();
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    const id = req.headers['webhook-id'];
    let lagMs = null;
    try {
      lagMs = at - Date.parse(JSON.parse(Buffer.concat(chunks).toString('utf8')).occurredAt);
    } catch {
      // not an event: counted, no lag
    }
    deliveries.push({ id, lagMs });
    ids.add(id);
    res.writeHead(204).end();
  });
});

process.on('message', (m) => {
  if (m.cmd === 'reset') {
    deliveries = [];
    ids = new Set();
    process.send({ cmd: 'reset' });
  } else if (m.cmd === 'count') process.send({ cmd: 'count', received: ids.size });
  else if (m.cmd === 'report') {
    const cpu = process.cpuUsage();
    process.send({ cmd: 'report', received: ids.size, requests: deliveries.length, lags: deliveries.filter((d) => d.lagMs !== null).map((d) => d.lagMs), cpuMs: (cpu.user + cpu.system) / 1000 });
  } else if (m.cmd === 'stop') server.close(() => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
server.listen(0, '127.0.0.1', () => process.send({ cmd: 'listening', port: server.address().port }));
