#!/usr/bin/env node
// Generates TypeScript types for the Envoy API protos listed in protos/envoy-manifest.json,
// reading them from the installed @grpc/grpc-js-xds package. Output goes to src/generated/,
// which is git-ignored: types are a build product, never hand-edited or committed.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'protos/envoy-manifest.json'), 'utf8'));
const pkgDir = path.dirname(require.resolve(`${manifest.package}/package.json`, { paths: [root] }));
const outDir = path.join(root, 'src/generated');
fs.rmSync(outDir, { recursive: true, force: true });
// Files go first: yargs treats --includeDirs as an array and would swallow them.
const args = [
  ...manifest.files,
  '--keepCase',
  '--longs=String',
  '--enums=String',
  '--oneofs',
  '--json',
  '--grpcLib=@grpc/grpc-js',
  `--outDir=${outDir}`,
  ...manifest.includeDirs.map((d) => `--includeDirs=${path.join(pkgDir, d)}`),
];
const bin = require.resolve('@grpc/proto-loader/build/bin/proto-loader-gen-types.js', { paths: [root] });
execFileSync(process.execPath, [bin, ...args], { stdio: 'inherit' });

// The generator emits unused imports and helpers that strict tsc flags; the files are
// type declarations only, so exempt them from checking rather than loosening tsconfig.
for (const file of walk(outDir)) {
  const text = fs.readFileSync(file, 'utf8');
  if (!text.startsWith('// @ts-nocheck')) fs.writeFileSync(file, '// @ts-nocheck\n' + text);
}

function walk(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}
