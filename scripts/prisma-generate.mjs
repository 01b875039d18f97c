#!/usr/bin/env node
// Generates the Prisma client into prisma/generated (gitignored) without network access.
// `prisma generate` never runs the schema engine, but the CLI still resolves the native binary
// at start-up and tries to download it when missing; pointing PRISMA_SCHEMA_ENGINE_BINARY at
// any existing file stops that. Run it after install and before tests or builds.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const cli = join(dirname(require.resolve('prisma/package.json')), 'build', 'index.js');

const env = {
  ...process.env,
  // Any existing file will do: generation never executes it.
  PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY || process.execPath,
  // No version-check request to checkpoint.prisma.io.
  CHECKPOINT_DISABLE: '1',
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
};

const result = spawnSync(
  process.execPath,
  [cli, 'generate', '--schema', join(root, 'prisma', 'schema.prisma')],
  { cwd: root, env, stdio: 'inherit' },
);
if (result.error) {
  console.error(`prisma generate could not start: ${result.error.message}`);
  process.exit(1);
}
process.exit(result.status ?? 1);
