// `directories` (reference §2.3): folder browsing inside the home directory and the saved project,
// never file contents. Names only; every entry is checked with lstat so a symlink is never
// listed (and so never followed out of a root).
import { realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, relative } from 'node:path';
import { Limits, result, type Directory, type EdgeAgentResult } from '#contracts';
import { utf8Bytes } from '../common/utf8.js';
import { EdgeStatusError } from '../common/edge-errors.js';
import { ConfinedDir } from './confined-dir.js';

export function isInside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith('../') && !isAbsolute(rel));
}

/** Browse roots: symlinks resolved, `/` excluded, directories only, no duplicates, in order. */
export async function browseRoots(candidates: readonly (string | undefined)[]): Promise<string[]> {
  const roots: string[] = [];
  for (const candidate of candidates) {
    if (!candidate || !isAbsolute(candidate)) continue;
    try {
      const resolved = await realpath(candidate);
      if (resolved === '/' || roots.includes(resolved)) continue;
      if ((await stat(resolved)).isDirectory()) roots.push(resolved);
    } catch {
      // A root that does not resolve offers nothing to browse.
    }
  }
  return roots;
}

export async function listDirectories(
  candidates: readonly (string | undefined)[],
  requested: string,
): Promise<EdgeAgentResult> {
  const roots = await browseRoots(candidates);
  if (roots.length === 0) throw new EdgeStatusError('invalid_request', 'There is nothing to browse.');
  let wanted = requested === '' ? (roots[0] as string) : requested;
  if (!isAbsolute(wanted) || wanted.includes('\0'))
    throw new EdgeStatusError('invalid_request', 'The directory must be an absolute path.');
  try {
    wanted = await realpath(wanted);
  } catch {
    throw new EdgeStatusError('invalid_request', 'The directory does not resolve.');
  }
  const root = roots.find((candidate) => isInside(candidate, wanted));
  if (!root) throw new EdgeStatusError('invalid_request', 'The directory is outside the browse roots.');

  // Opened by its resolved path with O_NOFOLLOW, then re-resolved and compared (ConfinedDir.verify),
  // so a swap between resolving and opening cannot list another directory.
  const dir = await ConfinedDir.openRoot(wanted).catch(() => {
    throw new EdgeStatusError('invalid_request', 'The directory cannot be opened.');
  });
  const directories: Directory[] = [];
  let truncated: boolean;
  try {
    const { names, more } = await dir.names(Limits.DIRECTORY_READ_MAX);
    truncated = more;
    let budget = Limits.DIRECTORY_NAMES_MAX_BYTES;
    for (const name of names.sort()) {
      if (name.startsWith('.')) continue;
      const entry = await dir.lstatEntry(name).catch(() => undefined);
      // lstat: a symlink to a directory is not a directory here, so it is never offered.
      if (!entry?.isDirectory()) continue;
      const path = wanted === '/' ? `/${name}` : `${wanted}/${name}`;
      const cost = utf8Bytes(name) + utf8Bytes(path);
      if (cost > budget || directories.length >= Limits.DIRECTORIES_RETURNED_MAX) {
        truncated = true;
        break;
      }
      budget -= cost;
      directories.push({ name, path });
    }
    await dir.verify();
  } finally {
    await dir.close();
  }
  const parent = dirname(wanted);
  return result('ok', {
    directory: wanted,
    directory_roots: roots,
    directories,
    ...(parent !== wanted && wanted !== root && isInside(root, parent) ? { parent_directory: parent } : {}),
    truncated,
  });
}
