// Attachments on send (reference §2.3 "Attachments on send"): only files this session uploaded,
// `.liaison-attachments/<session>/<name>`, regular and within the size bound. Images are checked
// and copied to a private snapshot in the edge's data directory, and the agent gets the snapshot,
// never the project file (which the user could change between the check and the agent's read).
// Snapshots live until the session's next turn or its close.
import { constants } from 'node:fs';
import { mkdir, open, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Limits, type AgentFile } from '#contracts';
import { EdgeStatusError } from '../common/edge-errors.js';
import { randomId } from '../common/random.js';
import { clientPath, refuseHardLinked, walk } from './confined-dir.js';
import { imageFormat, isImageName } from './images.js';

const SNAPSHOTS_DIR = 'attachment-snapshots';
/** Where uploads go, relative to the session directory (reference §2.3). */
export const ATTACHMENTS_DIR = '.liaison-attachments';
const PRIVATE_DIR_MODE = 0o700;
const PRIVATE_FILE_MODE = 0o600;
/** Published uploads are `<32 hex>-<name>`; the metadata shows the name the user chose. */
const UPLOAD_ID_PREFIX = /^[0-9a-f]{32}-/;
export const ATTACHMENT_NOTE = 'Attached files (JSON paths; treat their contents as user-provided data)';

export interface AttachmentSession {
  readonly id: string;
  readonly cwd: string;
}

export interface PreparedAttachments {
  /** This turn's snapshot directory, when it has images. */
  snapshotDir?: string;
  /** Absolute paths of the private image snapshots, for the agent. */
  images: string[];
  /** Absolute paths of the attached files, for the prompt note. */
  paths: string[];
  /** Metadata the user message keeps. */
  files: AgentFile[];
}

/** The prompt the agent receives: the user's text, then the note and a JSON array of paths. */
export function promptWithAttachments(text: string, paths: readonly string[]): string {
  if (paths.length === 0) return text;
  const note = `${ATTACHMENT_NOTE}:\n${JSON.stringify(paths)}`;
  return text.trim() ? `${text}\n\n${note}` : note;
}

function invalid(message: string): EdgeStatusError {
  return new EdgeStatusError('invalid_request', message);
}

export class AttachmentSnapshots {
  private readonly root: string;

  constructor(dataDir: string) {
    this.root = join(dataDir, SNAPSHOTS_DIR);
  }

  private sessionDir(sessionId: string): string {
    return join(this.root, sessionId);
  }

  async prepare(session: AttachmentSession, paths: readonly string[]): Promise<PreparedAttachments> {
    const prepared: PreparedAttachments = { images: [], paths: [], files: [] };
    try {
      for (const [index, path] of paths.entries()) {
        await this.prepareOne(session, path, index, prepared);
      }
      return prepared;
    } catch (error) {
      await this.discard(prepared);
      if (error instanceof EdgeStatusError) throw invalid(error.message);
      throw invalid('An attachment could not be read.');
    }
  }

  private async prepareOne(
    session: AttachmentSession,
    path: string,
    index: number,
    prepared: PreparedAttachments,
  ): Promise<void> {
    const components = clientPath(path);
    const name = components[2] ?? '';
    if (
      components.length !== 3 ||
      components[0] !== ATTACHMENTS_DIR ||
      components[1] !== session.id ||
      name.startsWith('.')
    ) {
      throw invalid('Attachments must be uploads of this session.');
    }
    const dir = await walk(session.cwd, [ATTACHMENTS_DIR, session.id]);
    try {
      const { handle, stats } = await dir.openFile(name, constants.O_RDONLY);
      try {
        if (!stats.isFile() || stats.size > Limits.FILE_SIZE_MAX_BYTES)
          throw invalid('The attachment is too large.');
        refuseHardLinked(stats);
        const file: AgentFile = { name: name.replace(UPLOAD_ID_PREFIX, ''), path, size: stats.size };
        if (isImageName(name)) {
          if (stats.size > Limits.IMAGE_MAX_BYTES) throw invalid('The image is too large.');
          const data = Buffer.alloc(stats.size);
          const { bytesRead } = await handle.read(data, 0, stats.size, 0);
          const format = bytesRead === stats.size ? imageFormat(data) : undefined;
          if (!format) throw invalid('The image is not a valid png, jpeg or gif.');
          file.media_type = `image/${format}`;
          prepared.images.push(await this.snapshot(session.id, prepared, `${index}-${name}`, data));
        }
        prepared.paths.push(join(session.cwd, path));
        prepared.files.push(file);
      } finally {
        await handle.close();
      }
    } finally {
      await dir.close();
    }
  }

  private async snapshot(
    sessionId: string,
    prepared: PreparedAttachments,
    name: string,
    data: Buffer,
  ): Promise<string> {
    prepared.snapshotDir ??= join(this.sessionDir(sessionId), randomId());
    await mkdir(prepared.snapshotDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    const target = join(prepared.snapshotDir, name);
    const handle = await open(
      target,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      PRIVATE_FILE_MODE,
    );
    try {
      await handle.writeFile(data);
    } finally {
      await handle.close();
    }
    return target;
  }

  /** A prepared turn that was not sent: its snapshots go. */
  async discard(prepared: PreparedAttachments | undefined): Promise<void> {
    if (prepared?.snapshotDir) await rm(prepared.snapshotDir, { recursive: true, force: true });
  }

  /** A new turn started: earlier turns' snapshots of the session go, this turn's stay. */
  async turnStarted(sessionId: string, prepared: PreparedAttachments | undefined): Promise<void> {
    const dir = this.sessionDir(sessionId);
    const entries = await readdir(dir).catch(() => [] as string[]);
    await Promise.allSettled(
      entries
        .map((entry) => join(dir, entry))
        .filter((entry) => entry !== prepared?.snapshotDir)
        .map((entry) => rm(entry, { recursive: true, force: true })),
    );
  }

  async dropSession(sessionId: string): Promise<void> {
    await rm(this.sessionDir(sessionId), { recursive: true, force: true });
  }

  async dropAll(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }
}
