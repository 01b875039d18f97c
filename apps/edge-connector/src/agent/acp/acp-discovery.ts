// Finds ACP agents by looking at files only, the way the Codex driver finds Codex: the configured
// path, PATH, node_modules/.bin, the npm prefix, standard folders and version managers. Nothing is
// executed to find them.
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Installation } from '#contracts';
import type { AcpAgentSpec, DeclaredAgent } from './acp-agents.js';
import { declaredSpec } from './acp-agents.js';
import { DISCOVERY_DIRS_MAX, DISCOVERY_INSTALLATIONS_MAX, DISCOVERY_VERSION_DIRS_MAX } from './acp-limits.js';

export interface AcpDiscoveryInput {
  agents: readonly AcpAgentSpec[];
  /** `TETHER_GEMINI_PATH`: an explicit Gemini CLI, looked at first. */
  explicit?: { spec: AcpAgentSpec; path: string };
  declared: readonly DeclaredAgent[];
  env: Readonly<Record<string, string | undefined>>;
  localDirs: string[];
  nodePrefix: string;
}

/** A discovered installation with what launching it needs; the spec never leaves the edge. */
export interface AcpInstallation {
  installation: Installation;
  spec: AcpAgentSpec;
  resolved: string;
}

/** The kind is part of the identity, so one file found as two agents gets two ids. */
export function acpInstallationId(kind: string, candidate: string, resolved: string): string {
  return createHash('sha256')
    .update(`${kind}\0${candidate}\0${resolved}`)
    .digest()
    .subarray(0, 16)
    .toString('hex');
}

/** A regular, launchable file of `spec` after resolving symlinks, or undefined. */
export async function resolveAgentFile(spec: AcpAgentSpec, candidate: string): Promise<string | undefined> {
  if (!path.isAbsolute(candidate) || candidate.includes('\0')) return undefined;
  try {
    const resolved = await realpath(candidate);
    if (!spec.accepts(resolved)) return undefined;
    if (!(await stat(resolved)).isFile()) return undefined;
    // A `.js` entry point runs through node, so it only needs to be readable.
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
  names.sort((a, b) => b.localeCompare(a, 'en', { numeric: true }));
  return {
    dirs: names.slice(0, DISCOVERY_VERSION_DIRS_MAX).map((name) => path.join(root, name, ...suffix)),
    truncated: names.length > DISCOVERY_VERSION_DIRS_MAX,
  };
}

async function candidateDirs(
  input: AcpDiscoveryInput,
): Promise<{ dirs: [string, string][]; truncated: boolean }> {
  const { env } = input;
  const home = env.HOME && path.isAbsolute(env.HOME) ? env.HOME : undefined;
  const dirs: [string, string][] = [];
  let truncated = false;
  for (const entry of (env.PATH ?? '').split(path.delimiter)) {
    if (entry && path.isAbsolute(entry)) dirs.push([entry, 'path']);
  }
  for (const dir of input.localDirs) dirs.push([path.join(dir, 'node_modules', '.bin'), 'npm']);
  const npmPrefix = env.NPM_CONFIG_PREFIX ?? env.npm_config_prefix;
  if (npmPrefix && path.isAbsolute(npmPrefix)) dirs.push([path.join(npmPrefix, 'bin'), 'npm']);
  dirs.push([path.join(input.nodePrefix, 'bin'), 'npm']);
  for (const dir of ['/usr/local/bin', '/opt/homebrew/bin', '/usr/bin']) dirs.push([dir, 'standard']);
  if (home) {
    dirs.push([path.join(home, '.npm-global', 'bin'), 'npm']);
    dirs.push([path.join(home, '.local', 'bin'), 'standard']);
    dirs.push([path.join(home, 'bin'), 'standard']);
    dirs.push([path.join(home, '.opencode', 'bin'), 'standard']);
  }
  const voltaHome = env.VOLTA_HOME ?? (home && path.join(home, '.volta'));
  if (voltaHome) dirs.push([path.join(voltaHome, 'bin'), 'volta']);
  const nvmDir = env.NVM_DIR ?? (home && path.join(home, '.nvm'));
  if (nvmDir) {
    const found = await versionDirs(path.join(nvmDir, 'versions', 'node'), ['bin']);
    truncated ||= found.truncated;
    for (const dir of found.dirs) dirs.push([dir, 'nvm']);
  }
  const fnmRoot = env.FNM_DIR ?? (home && path.join(home, '.local', 'share', 'fnm'));
  if (fnmRoot) {
    const found = await versionDirs(path.join(fnmRoot, 'node-versions'), ['installation', 'bin']);
    truncated ||= found.truncated;
    for (const dir of found.dirs) dirs.push([dir, 'fnm']);
  }
  if (dirs.length > DISCOVERY_DIRS_MAX) {
    truncated = true;
    dirs.length = DISCOVERY_DIRS_MAX;
  }
  return { dirs, truncated };
}

export async function discoverAcp(
  input: AcpDiscoveryInput,
): Promise<{ found: AcpInstallation[]; truncated: boolean }> {
  const found: AcpInstallation[] = [];
  const seen = new Set<string>();
  let truncated = false;
  const add = async (spec: AcpAgentSpec, candidate: string, source: string): Promise<boolean> => {
    if (found.length >= DISCOVERY_INSTALLATIONS_MAX) {
      truncated = true;
      return false;
    }
    const resolved = await resolveAgentFile(spec, candidate);
    if (!resolved || seen.has(`${spec.kind}\0${resolved}`)) return true;
    seen.add(`${spec.kind}\0${resolved}`);
    const id = acpInstallationId(spec.kind, candidate, resolved);
    found.push({ installation: { id, kind: spec.kind, path: candidate, source }, spec, resolved });
    return true;
  };
  for (const agent of input.declared) await add(declaredSpec(agent), agent.command, 'configured');
  if (input.explicit) await add(input.explicit.spec, path.resolve(input.explicit.path), 'explicit');
  const dirs = await candidateDirs(input);
  truncated ||= dirs.truncated;
  const seenDirs = new Set<string>();
  outer: for (const [dir, source] of dirs.dirs) {
    if (seenDirs.has(dir)) continue;
    seenDirs.add(dir);
    for (const spec of input.agents) {
      for (const name of spec.names) if (!(await add(spec, path.join(dir, name), source))) break outer;
    }
  }
  return { found, truncated };
}
