#!/usr/bin/env node
// Convoy's sample backend: a tiny HTTP echo server. Each instance has a name and answers
// every request with JSON describing what it received, so curl output shows which backend
// a route reached. Usage: node server.js [--name NAME] [--port PORT] [--host HOST]
'use strict';
const http = require('node:http');
const { parseArgs } = require('node:util');

const { values } = parseArgs({
  options: {
    name: { type: 'string', default: process.env.BACKEND_NAME || 'echo' },
    port: { type: 'string', default: process.env.PORT || '8081' },
    host: { type: 'string', default: process.env.HOST || '127.0.0.1' },
  },
});

const server = http.createServer((req, res) => {
  const url = new URL(req.url || '/', 'http://placeholder');
  const body = JSON.stringify(
    {
      backend: values.name,
      method: req.method,
      host: req.headers.host,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
    },
    null,
    2,
  );
  res.writeHead(200, { 'content-type': 'application/json', 'x-backend': values.name });
  res.end(body + '\n');
});
server.listen(Number(values.port), values.host, () => {
  console.log(`backend ${values.name} listening on ${values.host}:${values.port}`);
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => server.close(() => process.exit(0)));
