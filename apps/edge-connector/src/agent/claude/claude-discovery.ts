// Finds Claude Code installations by looking at files only: a candidate is never executed. A
// candidate counts when, after resolving symlinks, it is the native `claude` binary (npm package,
// native installer) or the package's `cli.js`; shell wrappers and version-manager shims are not
// installations, because launching them runs code nobody vetted.
import { constants } from 'node:fs';
import { access, open, realpath, stat } from 'node:fs/promises';
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
} from '../install-discovery.js';
import { DISCOVERY_HEAD_BYTES } from './claude-limits.js';

export const CLAUDE_KIND = 'claude';

type Source = CommonSource | 'explicit';

/** The reference's identity: the kind is part of it, so a Codex and a Claude path never collide. */
export function claudeInstallationId(candidatePath: string, resolvedPath: string): string {
  return installationHash(CLAUDE_KIND, candidatePath, resolvedPath);
}

/** ELF and the Mach-O magics (thin 32/64-bit either byte order, universal). */
const NATIVE_MAGICS = ['7f454c46', 'cffaedfe', 'cefaedfe', 'feedfacf', 'feedface', 'cafebabe'];

async function head(file: string): Promise<Buffer> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const buffer = Buffer.alloc(DISCOVERY_HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** What a resolved file is: the native binary, the npm JS entry point, or nothing we launch. */
function classify(resolved: string, start: Buffer): 'native' | 'js' | undefined {
  const name = path.basename(resolved);
  const parent = path.basename(path.dirname(resolved));
  const isNative = NATIVE_MAGICS.includes(start.subarray(0, 4).toString('hex'));
  // npm: `@anthropic-ai/claude-code/bin/claude.exe`; native installer: `claude/versions/<version>`.
  if (isNative && (name === 'claude' || name === 'claude.exe')) return 'native';
  if (isNative && parent === 'versions' && path.basename(path.dirname(path.dirname(resolved))) === 'claude')
    return 'native';
  if (
    name === 'cli.js' &&
    parent === 'claude-code' &&
    resolved.includes(`${path.sep}@anthropic-ai${path.sep}`)
  )
    return 'js';
  return undefined;
}

/** A launchable Claude Code file after resolving symlinks, or undefined. */
export async function resolveClaudeFile(
  candidate: string,
): Promise<{ path: string; kind: 'native' | 'js' } | undefined> {
  if (!path.isAbsolute(candidate) || candidate.includes('\0')) return undefined;
  try {
    const resolved = await realpath(candidate);
    const info = await stat(resolved);
    if (!info.isFile()) return undefined;
    const kind = classify(resolved, await head(resolved));
    if (!kind) return undefined;
    // The npm entry point runs through node, so it only needs to be readable.
    await access(resolved, kind === 'js' ? constants.R_OK : constants.X_OK);
    return { path: resolved, kind };
  } catch {
    return undefined;
  }
}

/** Where Claude Code lives besides the common places. */
const CLAUDE_DIRS: AgentDirs<'standard'> = {
  // The native installer links `~/.local/bin/claude` (a standard dir); the old "local" install keeps
  // the package under `~/.claude/local` behind a wrapper script, so its package bin is looked at.
  extra: (home) => (home ? [[path.join(home, '.claude', 'local', 'node_modules', '.bin'), 'standard']] : []),
  // `~/.volta/bin/claude` is the volta shim; the package image holds the real binary.
  volta: (volta) => [
    [path.join(volta, 'tools', 'image', 'packages', '@anthropic-ai', 'claude-code', 'bin'), 'volta'],
  ],
};

export async function discoverClaude(input: DiscoveryInput): Promise<DiscoveryResult> {
  const collector = new InstallationCollector<Installation>();
  const found = await agentCandidateDirs(input, CLAUDE_DIRS);
  const files: [string, Source][] = found.dirs.map(([dir, source]) => [path.join(dir, 'claude'), source]);
  if (input.explicitPath) files.unshift([path.resolve(input.explicitPath), 'explicit']);
  for (const [candidate, source] of files) {
    const kept = await collector.add(
      async () => (await resolveClaudeFile(candidate))?.path,
      (resolved) => ({
        id: claudeInstallationId(candidate, resolved),
        kind: CLAUDE_KIND,
        path: candidate,
        source,
      }),
    );
    if (!kept) break;
  }
  return { installations: collector.found, truncated: collector.truncated || found.truncated };
}
