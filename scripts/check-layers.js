#!/usr/bin/env node
// Dependency rule for src/ (CONTRIBUTING.md): every top-level folder of src/ has a rank, and a
// file may import only from its own folder or from a folder of lower rank. Prints each import
// that breaks the rule and exits 1; run by scripts/lint.sh.
//
// Usage: node scripts/check-layers.js [--root DIR]   (DIR holds src/; default: this repository)
//
// Imports are read with TypeScript's own pre-processor (static, type-only, re-exports, dynamic
// import() and require()), so a commented-out import is not counted and no import form is missed.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

/** Rank of each top-level folder of src/: lower ranks are more basic. */
const RANKS = {
  util: 0,
  generated: 0,
  runtime: 0,
  pki: 0,
  re2: 0,
  observability: 1,
  store: 2,
  validation: 3,
  status: 3,
  model: 3,
  kubernetes: 4,
  gateway: 5,
  envoy: 5,
  xds: 6,
  providers: 7,
  controller: 8,
  fleets: 8,
  fleetpage: 8,
  cli: 9,
};

/** Folders not scanned: generated code imports only itself. */
const SKIPPED = new Set(['generated']);

/** Lists the .ts files under dir, sorted, skipping the folders in SKIPPED at the top level. */
function sourceFiles(srcDir) {
  const out = [];
  const walk = (dir, top) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!(top && SKIPPED.has(entry.name))) walk(full, false);
      } else if (entry.name.endsWith('.ts')) {
        out.push(full);
      }
    }
  };
  walk(srcDir, true);
  return out.sort();
}

/**
 * Returns the top-level folder of src/ that holds `target` (a file, or a folder imported through
 * its index), '' for a file directly in src/, or undefined for anything outside src/.
 */
function folderOf(srcDir, target) {
  const rel = path.relative(srcDir, target);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  const parts = rel.split(path.sep);
  if (parts.length > 1) return parts[0];
  return fs.statSync(target, { throwIfNoEntry: false })?.isDirectory() ? parts[0] : '';
}

/**
 * Returns every import in src/ that breaks the rule, as { file, line, specifier, problem }, with
 * file relative to root. Package imports (no leading dot) are not checked.
 */
function findViolations(root, ranks = RANKS) {
  const srcDir = path.join(root, 'src');
  const violations = [];
  for (const file of sourceFiles(srcDir)) {
    const from = folderOf(srcDir, file);
    const text = fs.readFileSync(file, 'utf8');
    const info = ts.preProcessFile(text, true, true);
    const report = (ref, problem) =>
      violations.push({
        file: path.relative(root, file),
        line: text.slice(0, ref.pos).split('\n').length,
        specifier: ref.fileName,
        problem,
      });
    if (!(from in ranks)) {
      report({ fileName: '', pos: 0 }, `folder src/${from} has no rank in scripts/check-layers.js`);
      continue;
    }
    for (const ref of info.importedFiles) {
      if (!ref.fileName.startsWith('.')) continue;
      const to = folderOf(srcDir, path.resolve(path.dirname(file), ref.fileName));
      if (to === undefined) report(ref, 'imports from outside src/');
      else if (to === from) continue;
      else if (!(to in ranks)) report(ref, `src/${to} has no rank in scripts/check-layers.js`);
      else if (ranks[to] >= ranks[from]) {
        report(ref, `src/${from} (rank ${ranks[from]}) may not import src/${to} (rank ${ranks[to]})`);
      }
    }
  }
  return violations;
}

module.exports = { RANKS, findViolations };

if (require.main === module) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--root');
  const root = at >= 0 ? path.resolve(args[at + 1]) : path.resolve(__dirname, '..');
  const violations = findViolations(root);
  for (const v of violations) console.error(`${v.file}:${v.line}: '${v.specifier}': ${v.problem}`);
  if (violations.length > 0) {
    console.error(`check-layers: ${violations.length} import(s) break the dependency rule`);
    process.exit(1);
  }
  console.log('check-layers: every import in src/ points to its own folder or a lower rank');
}
