// Finds ACP agents by looking at files only, the way the Codex driver finds Codex: the configured
// path, PATH, node_modules/.bin, the npm prefix, standard folders and version managers. Nothing is
// executed to find them.
import path from 'node:path';
import type { Installation } from '#contracts';
import {
  type CandidateDir,
  type DiscoveryEnvironment,
  finishDirs,
  homeDir,
  InstallationCollector,
  installationHash,
  nvmDir,
  pathAndNpmDirs,
  resolveLaunchable,
  STANDARD_DIRS,
  uniqueDirs,
  voltaHome,
} from '../install-discovery.js';
import type { AcpAgentSpec, DeclaredAgent } from './acp-agents.js';
import { declaredSpec } from './acp-agents.js';

export interface AcpDiscoveryInput extends DiscoveryEnvironment {
  agents: readonly AcpAgentSpec[];
  /** `TETHER_GEMINI_PATH`: an explicit Gemini CLI, looked at first. */
  explicit?: { spec: AcpAgentSpec; path: string };
  declared: readonly DeclaredAgent[];
}

/** A discovered installation with what launching it needs; the spec never leaves the edge. */
export interface AcpInstallation {
  installation: Installation;
  spec: AcpAgentSpec;
  resolved: string;
}

/** The kind is part of the identity, so one file found as two agents gets two ids. */
export function acpInstallationId(kind: string, candidate: string, resolved: string): string {
  return installationHash(kind, candidate, resolved);
}

/** A regular, launchable file of `spec` after resolving symlinks, or undefined. */
export function resolveAgentFile(spec: AcpAgentSpec, candidate: string): Promise<string | undefined> {
  return resolveLaunchable(candidate, (resolved) => spec.accepts(resolved));
}

async function candidateDirs(
  input: AcpDiscoveryInput,
): Promise<{ dirs: CandidateDir<string>[]; truncated: boolean }> {
  const { env } = input;
  const home = homeDir(env);
  const dirs: CandidateDir<string>[] = pathAndNpmDirs(input);
  for (const dir of STANDARD_DIRS) dirs.push([dir, 'standard']);
  if (home) {
    dirs.push([path.join(home, '.npm-global', 'bin'), 'npm']);
    dirs.push([path.join(home, '.local', 'bin'), 'standard']);
    dirs.push([path.join(home, 'bin'), 'standard']);
    dirs.push([path.join(home, '.opencode', 'bin'), 'standard']);
  }
  const volta = voltaHome(env, home);
  if (volta) dirs.push([path.join(volta, 'bin'), 'volta']);
  // One fnm root only: an empty FNM_DIR means no fnm here, not fnm's default places.
  const fnmRoot = env.FNM_DIR ?? (home && path.join(home, '.local', 'share', 'fnm'));
  const truncated = await finishDirs(dirs, nvmDir(env, home), fnmRoot ? [fnmRoot] : []);
  return { dirs, truncated };
}

export async function discoverAcp(
  input: AcpDiscoveryInput,
): Promise<{ found: AcpInstallation[]; truncated: boolean }> {
  const collector = new InstallationCollector<AcpInstallation>();
  const add = (spec: AcpAgentSpec, candidate: string, source: string): Promise<boolean> =>
    collector.add(
      () => resolveAgentFile(spec, candidate),
      (resolved) => {
        const id = acpInstallationId(spec.kind, candidate, resolved);
        return { installation: { id, kind: spec.kind, path: candidate, source }, spec, resolved };
      },
      (resolved) => `${spec.kind}\0${resolved}`,
    );
  for (const agent of input.declared) await add(declaredSpec(agent), agent.command, 'configured');
  if (input.explicit) await add(input.explicit.spec, path.resolve(input.explicit.path), 'explicit');
  const dirs = await candidateDirs(input);
  outer: for (const [dir, source] of uniqueDirs(dirs.dirs)) {
    for (const spec of input.agents) {
      for (const name of spec.names) if (!(await add(spec, path.join(dir, name), source))) break outer;
    }
  }
  return { found: collector.found, truncated: collector.truncated || dirs.truncated };
}
