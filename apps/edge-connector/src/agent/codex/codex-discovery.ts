// Finds Codex installations by looking at files only: a candidate is never executed, because an
// edge must not run an unknown binary just to learn whether it is Codex.
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Installation } from '#contracts';
import type { DiscoveryResult } from '../agent-driver.js';
import {
  DISCOVERY_DIRS_MAX,
  DISCOVERY_INSTALLATIONS_MAX,
  DISCOVERY_VERSION_DIRS_MAX,
} from './codex-limits.js';

export const CODEX_KIND = 'codex';

export type InstallationSource = 'explicit' | 'path' | 'npm' | 'standard' | 'app' | 'volta' | 'nvm' | 'fnm';

export interface DiscoveryInput {
  explicitPath?: string;
  /** The edge's environment (PATH, HOME, NVM_DIR, FNM_DIR, VOLTA_HOME, NPM_CONFIG_PREFIX). */
  env: Readonly<Record<string, string | undefined>>;
  /** Directories whose `node_modules/.bin` may hold a local install. */
  localDirs: string[];
  /** The running node's prefix: the default npm global prefix. */
  nodePrefix: string;
}

/** Names the resolved file may have; anything else (volta-shim, asdf wrappers) is a wrapper. */
const CODEX_FILE_NAMES = new Set(['codex', 'codex.js']);

export function installationId(candidatePath: string, resolvedPath: string): string {
  return createHash('sha256')
    .update(`${CODEX_KIND}\0${candidatePath}\0${resolvedPath}`)
    .digest()
    .subarray(0, 16)
    .toString('hex');
}

/** A regular, launchable Codex file after resolving symlinks, or undefined. */
export async function resolveCodexFile(candidate: string): Promise<string | undefined> {
  if (!path.isAbsolute(candidate) || candidate.includes('\0')) return undefined;
  try {
    const resolved = await realpath(candidate);
    if (!CODEX_FILE_NAMES.has(path.basename(resolved))) return undefined;
    const info = await stat(resolved);
    if (!info.isFile()) return undefined;
    // The npm entry point runs through node, so it only needs to be readable.
    await access(resolved, resolved.endsWith('.js') ? constants.R_OK : constants.X_OK);
    return resolved;
  } catch {
    return undefined;
  }
}

async function versionDirs(root: string, suffix: string[]): Promise<{ dirs: string[]; truncated: boolean }> {
  let names: string[];
  try {
    names = (await readdir(root, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
      .map((entry) => entry.name);
  } catch {
    return { dirs: [], truncated: false };
  }
  // Newest-looking versions first so the bound drops the oldest ones.
  names.sort((a, b) => b.localeCompare(a, 'en', { numeric: true }));
  const truncated = names.length > DISCOVERY_VERSION_DIRS_MAX;
  return {
    dirs: names.slice(0, DISCOVERY_VERSION_DIRS_MAX).map((name) => path.join(root, name, ...suffix)),
    truncated,
  };
}

/** Every directory to look in, in priority order, with the source each one reports. */
async function candidateDirs(
  input: DiscoveryInput,
): Promise<{ dirs: [string, InstallationSource][]; truncated: boolean }> {
  const { env } = input;
  const home = env.HOME && path.isAbsolute(env.HOME) ? env.HOME : undefined;
  const dirs: [string, InstallationSource][] = [];
  let truncated = false;

  for (const entry of (env.PATH ?? '').split(path.delimiter)) {
    if (entry && path.isAbsolute(entry)) dirs.push([entry, 'path']);
  }
  for (const dir of input.localDirs) dirs.push([path.join(dir, 'node_modules', '.bin'), 'npm']);
  const npmPrefix = env.NPM_CONFIG_PREFIX ?? env.npm_config_prefix;
  if (npmPrefix && path.isAbsolute(npmPrefix)) dirs.push([path.join(npmPrefix, 'bin'), 'npm']);
  dirs.push([path.join(input.nodePrefix, 'bin'), 'npm']);
  if (home) dirs.push([path.join(home, '.npm-global', 'bin'), 'npm']);

  for (const dir of ['/usr/local/bin', '/opt/homebrew/bin', '/usr/bin']) dirs.push([dir, 'standard']);
  if (home) {
    dirs.push([path.join(home, '.local', 'bin'), 'standard']);
    dirs.push([path.join(home, 'bin'), 'standard']);
  }
  dirs.push(['/Applications/Codex.app/Contents/Resources', 'app']);

  const voltaHome = env.VOLTA_HOME ?? (home && path.join(home, '.volta'));
  if (voltaHome) {
    // `~/.volta/bin/codex` is the volta shim (a wrapper); the package image holds the real entry point.
    dirs.push([path.join(voltaHome, 'tools', 'image', 'packages', '@openai', 'codex', 'bin'), 'volta']);
    dirs.push([path.join(voltaHome, 'bin'), 'volta']);
  }
  const nvmDir = env.NVM_DIR ?? (home && path.join(home, '.nvm'));
  if (nvmDir) {
    const found = await versionDirs(path.join(nvmDir, 'versions', 'node'), ['bin']);
    truncated ||= found.truncated;
    for (const dir of found.dirs) dirs.push([dir, 'nvm']);
  }
  const fnmRoots = env.FNM_DIR
    ? [env.FNM_DIR]
    : home
      ? [path.join(home, '.local', 'share', 'fnm'), path.join(home, '.fnm')]
      : [];
  for (const root of fnmRoots) {
    const found = await versionDirs(path.join(root, 'node-versions'), ['installation', 'bin']);
    truncated ||= found.truncated;
    for (const dir of found.dirs) dirs.push([dir, 'fnm']);
  }
  if (dirs.length > DISCOVERY_DIRS_MAX) {
    truncated = true;
    dirs.length = DISCOVERY_DIRS_MAX;
  }
  return { dirs, truncated };
}

export async function discoverCodex(input: DiscoveryInput): Promise<DiscoveryResult> {
  const installations: Installation[] = [];
  const seenResolved = new Set<string>();
  let truncated = false;

  const add = async (candidate: string, source: InstallationSource): Promise<boolean> => {
    if (installations.length >= DISCOVERY_INSTALLATIONS_MAX) {
      truncated = true;
      return false;
    }
    const resolved = await resolveCodexFile(candidate);
    if (!resolved || seenResolved.has(resolved)) return true;
    seenResolved.add(resolved);
    installations.push({
      id: installationId(candidate, resolved),
      kind: CODEX_KIND,
      path: candidate,
      source,
    });
    return true;
  };

  if (input.explicitPath) await add(path.resolve(input.explicitPath), 'explicit');
  const found = await candidateDirs(input);
  truncated ||= found.truncated;
  const seenDirs = new Set<string>();
  for (const [dir, source] of found.dirs) {
    if (seenDirs.has(dir)) continue;
    seenDirs.add(dir);
    const names =
      source === 'volta' && dir.endsWith(`${path.sep}bin`) && dir.includes('@openai')
        ? ['codex.js']
        : ['codex'];
    let keepGoing = true;
    for (const name of names) keepGoing &&= await add(path.join(dir, name), source);
    if (!keepGoing) break;
  }
  return { installations, truncated };
}
