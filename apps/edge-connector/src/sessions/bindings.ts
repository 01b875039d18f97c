// The resume bindings of saved-access sessions (reference §2.3 start/resume/delete, §5): which
// native thread, directory and installation a (owner, access, session) ran with, so a session can
// be resumed after the edge restarts. Kept in one JSON file in the edge's data directory, decoded
// strictly and rewritten atomically (temp file, fsync, rename, directory fsync) with mode 0600.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { Limits } from '#contracts';
import { Mutex } from '../common/mutex.js';

export const BINDINGS_FILE = 'agent-bindings.json';
export const BINDINGS_VERSION = 1;
/** Persisted bindings at most; a start with an access beyond it is `unavailable` [§2.3 start 5]. */
export const BINDINGS_MAX = 4096;
/** The file is refused (and never overwritten) above this size [§5]. */
export const BINDINGS_FILE_MAX_BYTES = 4 * 1024 * 1024;
/** Paths and native ids stored in a binding; the contract's path bound, and room for any thread id. */
const BINDING_PATH_MAX = Limits.PROJECT_MAX_BYTES;
const BINDING_ID_MAX = 256;
/** Only the edge's own account may read the file: it names projects and native threads. */
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

export interface AgentBinding {
  owner: string;
  access: string;
  session: string;
  /** The native thread id the driver issued. */
  thread: string;
  /** The session directory (the agent's cwd). */
  project: string;
  /** The saved access's resolved project root at start. */
  access_project: string;
  installation_id: string;
  /**
   * The installation's agent kind. An edge that runs several drivers relaunches with the driver of
   * this kind only; bindings written before it was recorded lack it (the id alone decides then).
   */
  kind?: string;
}

const bindingSchema = z.strictObject({
  owner: z.string().min(1).max(Limits.ACTOR_ID_MAX_LENGTH),
  access: z.string().length(Limits.OPAQUE_ID_LENGTH),
  session: z.string().length(Limits.OPAQUE_ID_LENGTH),
  thread: z.string().min(1).max(BINDING_ID_MAX),
  project: z.string().min(1).max(BINDING_PATH_MAX),
  access_project: z.string().min(1).max(BINDING_PATH_MAX),
  installation_id: z.string().min(1).max(Limits.INSTALLATION_ID_MAX_BYTES),
  kind: z.string().min(1).max(Limits.AGENT_KIND_MAX_LENGTH).optional(),
});

const fileSchema = z.strictObject({
  version: z.literal(BINDINGS_VERSION),
  bindings: z.array(bindingSchema).max(BINDINGS_MAX),
});

/** The binding file cannot be read, decoded or written; callers answer `unavailable`. */
export class BindingStoreError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BindingStoreError';
  }
}

const keyOf = (owner: string, access: string, session: string): string => `${owner}\0${access}\0${session}`;

/**
 * One store per edge. `dir === null` keeps bindings in memory only (unit tests of the session
 * manager); everything else behaves the same.
 */
export class BindingStore {
  private cache: Map<string, AgentBinding> | null = null;
  private readonly lock = new Mutex();

  constructor(private readonly dir: string | null) {}

  get path(): string | null {
    return this.dir === null ? null : join(this.dir, BINDINGS_FILE);
  }

  async count(): Promise<number> {
    return (await this.load()).size;
  }

  async get(owner: string, access: string, session: string): Promise<AgentBinding | undefined> {
    const found = (await this.load()).get(keyOf(owner, access, session));
    return found ? { ...found } : undefined;
  }

  /** Adds or replaces one binding; refused when the store is full. */
  put(binding: AgentBinding): Promise<void> {
    const checked = bindingSchema.safeParse(binding);
    if (!checked.success) return Promise.reject(new BindingStoreError('The binding is not valid.'));
    return this.lock.run(async () => {
      const next = new Map(await this.load());
      const key = keyOf(binding.owner, binding.access, binding.session);
      if (!next.has(key) && next.size >= BINDINGS_MAX) {
        throw new BindingStoreError('The binding store is full.');
      }
      next.set(key, { ...checked.data });
      await this.persist(next);
    });
  }

  /** Removes one binding; resolves false when there was none. */
  remove(owner: string, access: string, session: string): Promise<boolean> {
    return this.lock.run(async () => {
      const next = new Map(await this.load());
      if (!next.delete(keyOf(owner, access, session))) return false;
      await this.persist(next);
      return true;
    });
  }

  private async load(): Promise<Map<string, AgentBinding>> {
    if (this.cache) return this.cache;
    const loaded = new Map<string, AgentBinding>();
    const file = this.path;
    if (file !== null) {
      let raw: string | undefined;
      try {
        const info = await stat(file);
        if (!info.isFile() || info.size > BINDINGS_FILE_MAX_BYTES) {
          throw new BindingStoreError('The binding file is not a regular file within its size bound.');
        }
        raw = await readFile(file, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
          throw error instanceof BindingStoreError
            ? error
            : new BindingStoreError('The binding file cannot be read.', { cause: error });
        }
      }
      if (raw !== undefined) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(raw);
        } catch (error) {
          throw new BindingStoreError('The binding file is not JSON.', { cause: error });
        }
        const decoded = fileSchema.safeParse(parsed);
        if (!decoded.success) throw new BindingStoreError('The binding file does not decode.');
        for (const binding of decoded.data.bindings) {
          loaded.set(keyOf(binding.owner, binding.access, binding.session), binding);
        }
      }
    }
    this.cache = loaded;
    return loaded;
  }

  /** Writes the whole set, then adopts it; a failed write leaves the file and the cache as they were. */
  private async persist(next: Map<string, AgentBinding>): Promise<void> {
    const file = this.path;
    if (file !== null && this.dir !== null) {
      const body = JSON.stringify({ version: BINDINGS_VERSION, bindings: [...next.values()] });
      if (Buffer.byteLength(body) > BINDINGS_FILE_MAX_BYTES) {
        throw new BindingStoreError('The binding file would exceed its size bound.');
      }
      const temp = join(this.dir, `.${BINDINGS_FILE}.${randomBytes(6).toString('hex')}.tmp`);
      try {
        await mkdir(this.dir, { recursive: true, mode: DIR_MODE });
        const handle = await open(temp, 'wx', FILE_MODE);
        try {
          await handle.writeFile(body);
          await handle.sync();
        } finally {
          await handle.close();
        }
        await rename(temp, file);
        const dir = await open(this.dir, 'r');
        try {
          await dir.sync();
        } finally {
          await dir.close();
        }
      } catch (error) {
        await rm(temp, { force: true }).catch(() => undefined);
        throw new BindingStoreError('The binding file cannot be written.', { cause: error });
      }
    }
    this.cache = next;
  }
}
