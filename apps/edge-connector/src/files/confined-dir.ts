// Confinement of file access to one root directory (reference §2.3 "file_*", §5 paths).
//
// Node has no openat(2) and no O_NOFOLLOW walk for directories: `fs.open` takes a whole path, so
// every intermediate component is resolved by the kernel, symlinks included. Two things close the
// gap:
// - On Linux, a directory held open as an fd is reachable as `/proc/self/fd/<fd>/<name>`; the
//   kernel resolves that from the open directory itself, whatever was renamed or swapped on the
//   path since. Walking one component at a time with O_DIRECTORY|O_NOFOLLOW through those paths is
//   an openat walk: a component that is a symlink fails with ELOOP, and a directory swapped for a
//   symlink after we opened it cannot redirect us.
// - Everywhere (and as a second check on Linux), after each open the handle's fstat dev/ino is
//   compared with a fresh lstat of its path: a swap between the walk and the open shows as a
//   different inode (or a symlink) and the operation is refused.
import { constants, type Stats } from 'node:fs';
import { existsSync } from 'node:fs';
import { lstat, mkdir, open, opendir, type FileHandle } from 'node:fs/promises';
import { EdgeStatusError } from '../common/edge-errors.js';

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = constants;
/** O_DIRECTORY is missing on some platforms; a fstat check stands in for it there. */
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
const PROC_FD = '/proc/self/fd';
const hasProcFd = existsSync(PROC_FD);

/** A confinement failure; the caller maps it to `invalid_request` or `not_found`. */
export class EscapeError extends EdgeStatusError {
  constructor(message: string) {
    super('invalid_request', message);
    this.name = 'EscapeError';
  }
}

/**
 * Refuses a regular file with more than one hard link. A hard link planted inside a project is
 * the same inode as a file outside it (say, the owner's SSH key), and nothing in its path can
 * tell; a confined read must never hand out bytes that also live outside the root.
 */
export function refuseHardLinked(stats: Stats): void {
  if (stats.isFile() && stats.nlink > 1) {
    throw new EscapeError('The file has more than one hard link; it may live outside the project.');
  }
}

export function sameFile(a: Stats, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** An open directory under a root, with the path it was reached by. */
export class ConfinedDir {
  private constructor(
    private readonly handle: FileHandle,
    /** The logical absolute path (root plus the components walked). */
    readonly path: string,
    readonly stats: Stats,
  ) {}

  /** Opens an already symlink-resolved absolute directory. */
  static async openRoot(root: string): Promise<ConfinedDir> {
    return ConfinedDir.openAt(root, root);
  }

  private static async openAt(openPath: string, logicalPath: string): Promise<ConfinedDir> {
    let handle: FileHandle;
    try {
      handle = await open(openPath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOENT') throw new EdgeStatusError('not_found', 'No such directory.');
      throw new EscapeError(`The directory cannot be opened (${code ?? 'error'}).`);
    }
    try {
      const stats = await handle.stat();
      if (!stats.isDirectory()) throw new EscapeError('Not a directory.');
      const dir = new ConfinedDir(handle, logicalPath, stats);
      await dir.verify();
      return dir;
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** The path through which `name` inside this directory is reached without re-walking the root. */
  entry(name: string): string {
    return hasProcFd ? `${PROC_FD}/${this.handle.fd}/${name}` : `${this.path}/${name}`;
  }

  /** The logical path of `name` (for replies and for the agent), never used to open anything. */
  logical(name: string): string {
    return `${this.path}/${name}`;
  }

  /** Refuses when the logical path no longer leads to this directory (a swap after the open). */
  async verify(): Promise<void> {
    let fresh: Stats;
    try {
      fresh = await lstat(this.path);
    } catch {
      throw new EscapeError('The directory moved.');
    }
    if (fresh.isSymbolicLink() || !sameFile(fresh, this.stats)) throw new EscapeError('The directory moved.');
  }

  /** Opens the child directory `name`; a symlink or anything but a directory is refused. */
  async child(name: string, create?: { mode: number }): Promise<ConfinedDir> {
    if (create) {
      try {
        await mkdir(this.entry(name), { mode: create.mode });
      } catch (error) {
        if (errorCode(error) !== 'EEXIST') throw new EscapeError('The directory cannot be created.');
      }
    }
    return ConfinedDir.openAt(this.entry(name), this.logical(name));
  }

  /** lstat of one entry, or undefined when it does not exist. */
  async lstatEntry(name: string): Promise<Stats | undefined> {
    try {
      return await lstat(this.entry(name));
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return undefined;
      throw error;
    }
  }

  /**
   * Opens the file `name` without following a symlink (O_NOFOLLOW on the final component), then
   * checks the opened inode is still what the path names.
   */
  async openFile(name: string, flags: number, mode?: number): Promise<{ handle: FileHandle; stats: Stats }> {
    let handle: FileHandle;
    try {
      handle = await open(this.entry(name), flags | O_NOFOLLOW | O_NONBLOCK, mode);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOENT') throw new EdgeStatusError('not_found', 'No such file.');
      if (code === 'EEXIST') throw new EscapeError('The file exists.');
      throw new EscapeError(`The file cannot be opened (${code ?? 'error'}).`);
    }
    try {
      const stats = await handle.stat();
      await this.checkEntry(name, stats);
      return { handle, stats };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** The entry `name` is still the inode `stats` (not replaced, not a symlink) and we did not move. */
  async checkEntry(name: string, stats: Stats): Promise<void> {
    await this.verify();
    const fresh = await this.lstatEntry(name);
    if (!fresh || fresh.isSymbolicLink() || !sameFile(fresh, stats))
      throw new EscapeError('The file was replaced.');
  }

  /** Entry names, at most `max`; `more` says the directory had further entries. */
  async names(max: number): Promise<{ names: string[]; more: boolean }> {
    const dir = await opendir(this.entry('.'));
    const names: string[] = [];
    let more = false;
    try {
      for (;;) {
        const dirent = await dir.read();
        if (!dirent) break;
        if (names.length >= max) {
          more = true;
          break;
        }
        names.push(dirent.name);
      }
    } finally {
      await dir.close();
    }
    return { names, more };
  }

  async sync(): Promise<void> {
    try {
      await this.handle.sync();
    } catch {
      // Some file systems refuse fsync on directories; the file itself was synced.
    }
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }
}

/**
 * Walks `components` below `root` one directory at a time; each must be a real directory. The
 * caller closes the returned directory; intermediate ones are closed here.
 */
export async function walk(
  root: string,
  components: readonly string[],
  create?: { mode: number },
): Promise<ConfinedDir> {
  let dir = await ConfinedDir.openRoot(root);
  try {
    for (const component of components) {
      const next = await dir.child(component, create);
      await dir.close();
      dir = next;
    }
    return dir;
  } catch (error) {
    await dir.close();
    throw error;
  }
}

/**
 * The components of a client path relative to a session directory (reference §2.3): no `\`, not
 * absolute, no `..`, no NUL or control characters, no component starting with `.upload-`, no
 * empty components. `''` and `'.'` name the root itself.
 */
export function clientPath(path: string): string[] {
  if (path === '' || path === '.') return [];
  if (path.includes('\\') || path.startsWith('/') || /\p{Cc}/u.test(path)) {
    throw new EscapeError('The path is not a relative local path.');
  }
  const components = path.split('/');
  for (const component of components) {
    if (component === '' || component === '.' || component === '..' || component.startsWith('.upload-')) {
      throw new EscapeError('The path is not a relative local path.');
    }
  }
  return components;
}
