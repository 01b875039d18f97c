// Finds Codex installations by looking at files only: a candidate is never executed, because an
// edge must not run an unknown binary just to learn whether it is Codex.
import path from 'node:path';
import type { Installation } from '#contracts';
import type { DiscoveryResult } from '../agent-driver.js';
import {
  type CandidateDir,
  type DiscoveryInput,
  finishDirs,
  fnmRoots,
  homeDir,
  InstallationCollector,
  installationHash,
  nvmDir,
  pathAndNpmDirs,
  resolveLaunchable,
  standardDirs,
  uniqueDirs,
  voltaHome,
} from '../install-discovery.js';
import {
  DISCOVERY_DIRS_MAX,
  DISCOVERY_INSTALLATIONS_MAX,
  DISCOVERY_VERSION_DIRS_MAX,
} from './codex-limits.js';

export const CODEX_KIND = 'codex';

const DISCOVERY_BOUNDS = { dirsMax: DISCOVERY_DIRS_MAX, versionsMax: DISCOVERY_VERSION_DIRS_MAX };

export type InstallationSource = 'explicit' | 'path' | 'npm' | 'standard' | 'app' | 'volta' | 'nvm' | 'fnm';

/** Names the resolved file may have; anything else (volta-shim, asdf wrappers) is a wrapper. */
const CODEX_FILE_NAMES = new Set(['codex', 'codex.js']);

export function installationId(candidatePath: string, resolvedPath: string): string {
  return installationHash(CODEX_KIND, candidatePath, resolvedPath);
}

/** A regular, launchable Codex file after resolving symlinks, or undefined. */
export function resolveCodexFile(candidate: string): Promise<string | undefined> {
  return resolveLaunchable(candidate, (resolved) => CODEX_FILE_NAMES.has(path.basename(resolved)));
}

/** Every directory to look in, in priority order, with the source each one reports. */
async function candidateDirs(
  input: DiscoveryInput,
): Promise<{ dirs: CandidateDir<InstallationSource>[]; truncated: boolean }> {
  const { env } = input;
  const home = homeDir(env);
  const dirs: CandidateDir<InstallationSource>[] = [...pathAndNpmDirs(input), ...standardDirs(home)];
  dirs.push(['/Applications/Codex.app/Contents/Resources', 'app']);
  const volta = voltaHome(env, home);
  if (volta) {
    // `~/.volta/bin/codex` is the volta shim (a wrapper); the package image holds the real entry point.
    dirs.push([path.join(volta, 'tools', 'image', 'packages', '@openai', 'codex', 'bin'), 'volta']);
    dirs.push([path.join(volta, 'bin'), 'volta']);
  }
  const truncated = await finishDirs(dirs, nvmDir(env, home), fnmRoots(env, home), DISCOVERY_BOUNDS);
  return { dirs, truncated };
}

export async function discoverCodex(input: DiscoveryInput): Promise<DiscoveryResult> {
  const collector = new InstallationCollector<Installation>(DISCOVERY_INSTALLATIONS_MAX);
  const add = (candidate: string, source: InstallationSource): Promise<boolean> =>
    collector.add(
      () => resolveCodexFile(candidate),
      (resolved) => ({ id: installationId(candidate, resolved), kind: CODEX_KIND, path: candidate, source }),
    );

  if (input.explicitPath) await add(path.resolve(input.explicitPath), 'explicit');
  const found = await candidateDirs(input);
  for (const [dir, source] of uniqueDirs(found.dirs)) {
    const names =
      source === 'volta' && dir.endsWith(`${path.sep}bin`) && dir.includes('@openai')
        ? ['codex.js']
        : ['codex'];
    let keepGoing = true;
    for (const name of names) keepGoing &&= await add(path.join(dir, name), source);
    if (!keepGoing) break;
  }
  return { installations: collector.found, truncated: collector.truncated || found.truncated };
}
