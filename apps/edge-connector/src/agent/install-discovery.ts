// The steps every driver's installation discovery shares (Codex, Claude Code, ACP agents): the
// installation id, the directories npm and the version managers install into, and collecting
// installations within the bounds. Discovery only looks at files: a candidate is never executed.
// Each driver keeps its own candidate list order and its own test of what a launchable file is.
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';

/** Where discovery looks and what it may read; the edge's own environment. */
export interface DiscoveryEnvironment {
  /** The edge's environment (PATH, HOME, NVM_DIR, FNM_DIR, VOLTA_HOME, NPM_CONFIG_PREFIX). */
  env: Readonly<Record<string, string | undefined>>;
  /** Directories whose `node_modules/.bin` may hold a local install. */
  localDirs: string[];
  /** The running node's prefix: the default npm global prefix. */
  nodePrefix: string;
}

/** What a single-agent discovery (Codex, Claude Code) reads: the places, and an explicit file first. */
export interface DiscoveryInput extends DiscoveryEnvironment {
  /** An installation the operator configured (`TETHER_CODEX_PATH`, `TETHER_CLAUDE_PATH`). */
  explicitPath?: string;
}

/** A directory to look in and the source an installation found there reports. */
export type CandidateDir<S extends string> = [dir: string, source: S];

/** Folders every driver looks in after PATH and npm. */
export const STANDARD_DIRS = ['/usr/local/bin', '/opt/homebrew/bin', '/usr/bin'];

/** The reference's identity: the kind is part of it, so one path found as two kinds gets two ids. */
export function installationHash(kind: string, candidatePath: string, resolvedPath: string): string {
  return createHash('sha256')
    .update(`${kind}\0${candidatePath}\0${resolvedPath}`)
    .digest()
    .subarray(0, 16)
    .toString('hex');
}

/** HOME when it is an absolute path. */
export const homeDir = (env: DiscoveryEnvironment['env']): string | undefined =>
  env.HOME && path.isAbsolute(env.HOME) ? env.HOME : undefined;

/**
 * A regular file `accepts` takes after resolving symlinks, launchable (a `.js` entry point runs
 * through node, so it only needs to be readable), or undefined.
 */
export async function resolveLaunchable(
  candidate: string,
  accepts: (resolved: string) => boolean,
): Promise<string | undefined> {
  if (!path.isAbsolute(candidate) || candidate.includes('\0')) return undefined;
  try {
    const resolved = await realpath(candidate);
    if (!accepts(resolved)) return undefined;
    if (!(await stat(resolved)).isFile()) return undefined;
    await access(resolved, resolved.endsWith('.js') ? constants.R_OK : constants.X_OK);
    return resolved;
  } catch {
    return undefined;
  }
}

/** PATH, then the npm places: local `node_modules/.bin`, the configured prefix, node's prefix. */
export function pathAndNpmDirs(input: DiscoveryEnvironment): CandidateDir<'path' | 'npm'>[] {
  const { env } = input;
  const dirs: CandidateDir<'path' | 'npm'>[] = [];
  for (const entry of (env.PATH ?? '').split(path.delimiter)) {
    if (entry && path.isAbsolute(entry)) dirs.push([entry, 'path']);
  }
  for (const dir of input.localDirs) dirs.push([path.join(dir, 'node_modules', '.bin'), 'npm']);
  const npmPrefix = env.NPM_CONFIG_PREFIX ?? env.npm_config_prefix;
  if (npmPrefix && path.isAbsolute(npmPrefix)) dirs.push([path.join(npmPrefix, 'bin'), 'npm']);
  dirs.push([path.join(input.nodePrefix, 'bin'), 'npm']);
  return dirs;
}

async function versionDirs(
  root: string,
  suffix: string[],
  max: number,
): Promise<{ dirs: string[]; truncated: boolean }> {
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
  return {
    dirs: names.slice(0, max).map((name) => path.join(root, name, ...suffix)),
    truncated: names.length > max,
  };
}

/** The npm global folder in HOME, the standard folders, then HOME's own `bin` folders. */
export function standardDirs(home: string | undefined): CandidateDir<'npm' | 'standard'>[] {
  const dirs: CandidateDir<'npm' | 'standard'>[] = [];
  if (home) dirs.push([path.join(home, '.npm-global', 'bin'), 'npm']);
  for (const dir of STANDARD_DIRS) dirs.push([dir, 'standard']);
  if (home) {
    dirs.push([path.join(home, '.local', 'bin'), 'standard']);
    dirs.push([path.join(home, 'bin'), 'standard']);
  }
  return dirs;
}

/** Volta's home: VOLTA_HOME, else `~/.volta`. */
export const voltaHome = (env: DiscoveryEnvironment['env'], home: string | undefined): string | undefined =>
  env.VOLTA_HOME ?? (home && path.join(home, '.volta'));

/** nvm's folder: NVM_DIR, else `~/.nvm`. */
export const nvmDir = (env: DiscoveryEnvironment['env'], home: string | undefined): string | undefined =>
  env.NVM_DIR ?? (home && path.join(home, '.nvm'));

/** fnm's roots: FNM_DIR, else both places fnm has used by default. */
export function fnmRoots(env: DiscoveryEnvironment['env'], home: string | undefined): string[] {
  if (env.FNM_DIR) return [env.FNM_DIR];
  return home ? [path.join(home, '.local', 'share', 'fnm'), path.join(home, '.fnm')] : [];
}

export interface DirBounds {
  /** Directories looked at in all. */
  dirsMax: number;
  /** Version folders per version manager. */
  versionsMax: number;
}

/** What every driver's discovery looks at and returns at most [§2.3 discover]. */
export const DISCOVERY_DIR_BOUNDS: DirBounds = { dirsMax: 128, versionsMax: 32 };
export const DISCOVERY_INSTALLATIONS_MAX = 16;

/**
 * Appends the `bin` folders of the node versions nvm (`nvm`) and fnm (`fnm`) hold, then cuts the
 * list to the bound; true when a bound dropped anything.
 */
export async function finishDirs(
  dirs: CandidateDir<string>[],
  nvm: string | undefined,
  fnm: string[],
  bounds: DirBounds = DISCOVERY_DIR_BOUNDS,
): Promise<boolean> {
  let truncated = false;
  if (nvm) {
    const found = await versionDirs(path.join(nvm, 'versions', 'node'), ['bin'], bounds.versionsMax);
    truncated ||= found.truncated;
    for (const dir of found.dirs) dirs.push([dir, 'nvm']);
  }
  for (const root of fnm) {
    const found = await versionDirs(
      path.join(root, 'node-versions'),
      ['installation', 'bin'],
      bounds.versionsMax,
    );
    truncated ||= found.truncated;
    for (const dir of found.dirs) dirs.push([dir, 'fnm']);
  }
  if (dirs.length > bounds.dirsMax) {
    truncated = true;
    dirs.length = bounds.dirsMax;
  }
  return truncated;
}

/** Sources every single-agent discovery reports besides its own. */
export type CommonSource = 'path' | 'npm' | 'standard' | 'volta' | 'nvm' | 'fnm';

/** What a single-agent discovery (Codex, Claude Code) adds to the common places. */
export interface AgentDirs<S extends string> {
  /** Folders after PATH, npm and the standard ones: an app bundle, an old local install. */
  extra?: (home: string | undefined) => CandidateDir<S>[];
  /**
   * Folders inside Volta's home: Volta's own `bin` holds a shim (a wrapper), its package image the
   * real entry point.
   */
  volta: (voltaHome: string) => CandidateDir<'volta'>[];
}

/**
 * Every directory a single-agent discovery looks in, in priority order, cut to the bounds and
 * without repeats: PATH and npm, the standard folders, the agent's own, Volta, nvm, fnm.
 */
export async function agentCandidateDirs<S extends string>(
  input: DiscoveryInput,
  layout: AgentDirs<S>,
): Promise<{ dirs: CandidateDir<S | CommonSource>[]; truncated: boolean }> {
  const { env } = input;
  const home = homeDir(env);
  const dirs: CandidateDir<S | CommonSource>[] = [
    ...pathAndNpmDirs(input),
    ...standardDirs(home),
    ...(layout.extra?.(home) ?? []),
  ];
  const volta = voltaHome(env, home);
  if (volta) dirs.push(...layout.volta(volta));
  const truncated = await finishDirs(dirs, nvmDir(env, home), fnmRoots(env, home));
  return { dirs: uniqueDirs(dirs), truncated };
}

/** `dirs` without repeats, first place kept. */
export function uniqueDirs<S extends string>(dirs: CandidateDir<S>[]): CandidateDir<S>[] {
  const seen = new Set<string>();
  return dirs.filter(([dir]) => {
    if (seen.has(dir)) return false;
    seen.add(dir);
    return true;
  });
}

/** Installations found so far, each resolved file once, at most `max`. */
export class InstallationCollector<T> {
  readonly found: T[] = [];
  truncated = false;
  private readonly seen = new Set<string>();

  constructor(private readonly max = DISCOVERY_INSTALLATIONS_MAX) {}

  /**
   * Resolves one candidate and keeps it unless its key (the resolved path by default) was seen;
   * false, and truncated, once the bound is reached.
   */
  async add(
    resolve: () => Promise<string | undefined>,
    entry: (resolved: string) => T,
    key: (resolved: string) => string = (resolved) => resolved,
  ): Promise<boolean> {
    if (this.found.length >= this.max) {
      this.truncated = true;
      return false;
    }
    const resolved = await resolve();
    if (!resolved || this.seen.has(key(resolved))) return true;
    this.seen.add(key(resolved));
    this.found.push(entry(resolved));
    return true;
  }
}
