// `npm run docs:config`: rewrites docs/configuration.md from the configuration schemas.
// `--check` only compares, and exits 1 when the document or the meanings are out of date.
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { configurationProblems, renderConfigurationReference } from './render.js';

const path = resolve(process.cwd(), 'docs/configuration.md');
const problems = configurationProblems();
if (problems.length > 0) {
  process.stderr.write(`Configuration meanings disagree with the schemas:\n  ${problems.join('\n  ')}\n`);
  process.exit(1);
}
const text = await renderConfigurationReference(path);
if (process.argv.includes('--check')) {
  const current = readFileSync(path, 'utf8');
  if (current !== text) {
    process.stderr.write('docs/configuration.md is out of date: run `npm run docs:config`.\n');
    process.exit(1);
  }
} else {
  writeFileSync(path, text);
  process.stdout.write(`Wrote ${path}.\n`);
}
