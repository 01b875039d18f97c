// Finds Codex installations by looking at files only: a candidate is never executed, because an
// edge must not run an unknown binary just to learn whether it is Codex.
import path from 'node:path';
import type { Installation } from '#contracts';
import type { DiscoveryResult } from '../agent-driver.js';
import {
  agentCandidateDirs,
  type AgentDirs,
  type CommonSource,
  type DiscoveryInput,
  InstallationCollector,
  installationHash,
  resolveLaunchable,
} from '../install-discovery.js';

export const CODEX_KIND = 'codex';

export type InstallationSource = CommonSource | 'explicit' | 'app';

/** Names the resolved file may have; anything else (volta-shim, asdf wrappers) is a wrapper. */
const CODEX_FILE_NAMES = new Set(['codex', 'codex.js']);

export function installationId(candidatePath: string, resolvedPath: string): string {
  return installationHash(CODEX_KIND, candidatePath, resolvedPath);
}

/** A regular, launchable Codex file after resolving symlinks, or undefined. */
export function resolveCodexFile(candidate: string): Promise<string | undefined> {
  return resolveLaunchable(candidate, (resolved) => CODEX_FILE_NAMES.has(path.basename(resolved)));
}

/** Where Codex lives besides the common places: its macOS app bundle and Volta's package image. */
const CODEX_DIRS: AgentDirs<'app'> = {
  extra: () => [['/Applications/Codex.app/Contents/Resources', 'app']],
  // `~/.volta/bin/codex` is the volta shim (a wrapper); the package image holds the real entry point.
  volta: (volta) => [
    [path.join(volta, 'tools', 'image', 'packages', '@openai', 'codex', 'bin'), 'volta'],
    [path.join(volta, 'bin'), 'volta'],
  ],
};

export async function discoverCodex(input: DiscoveryInput): Promise<DiscoveryResult> {
  const collector = new InstallationCollector<Installation>();
  const add = (candidate: string, source: InstallationSource): Promise<boolean> =>
    collector.add(
      () => resolveCodexFile(candidate),
      (resolved) => ({ id: installationId(candidate, resolved), kind: CODEX_KIND, path: candidate, source }),
    );

  if (input.explicitPath) await add(path.resolve(input.explicitPath), 'explicit');
  const found = await agentCandidateDirs(input, CODEX_DIRS);
  for (const [dir, source] of found.dirs) {
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
