#!/usr/bin/env node
// Prints what the console's first page loads (docs/benchmarks.md "Console first-page weight"):
// every script and stylesheet index.html names, raw and gzipped (level 9), and fails when the
// JavaScript exceeds the budget of 150 KB gzipped. Run after `npm run build:console`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const DIR = join(process.cwd(), 'dist', 'console');
const JS_BUDGET_BYTES = 150 * 1024;

let html;
try {
  html = readFileSync(join(DIR, 'index.html'), 'utf8');
} catch {
  process.stderr.write(
    'console-size: dist/console/index.html is missing; run npm run build:console first.\n',
  );
  process.exit(2);
}
const files = [...html.matchAll(/(?:src|href)="\.\/(assets\/[^"]+)"/g)].map((match) => match[1]);
let jsGzip = 0;
const rows = files.map((file) => {
  const body = readFileSync(join(DIR, file));
  const gzip = gzipSync(body, { level: 9 }).length;
  if (file.endsWith('.js')) jsGzip += gzip;
  return { file, raw: body.length, gzip };
});
for (const row of rows) {
  process.stdout.write(
    `${row.file.padEnd(36)} ${String(row.raw).padStart(8)} B  ${String(row.gzip).padStart(8)} B gzip\n`,
  );
}
process.stdout.write(`first-page JavaScript: ${jsGzip} B gzip (budget ${JS_BUDGET_BYTES} B)\n`);
if (jsGzip > JS_BUDGET_BYTES) process.exit(1);
