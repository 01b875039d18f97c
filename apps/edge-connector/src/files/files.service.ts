// The six file_* actions and `directories` (reference §2.3, §5). File content is confined to the
// session's working directory (ConfinedDir); uploads land in `.liaison-attachments/<session>/`
// and are published by hard link, so they never overwrite anything. The session manager has
// already matched (owner, access, session); this service also requires a saved access whose
// project_root still resolves to the session's.
import { constants } from 'node:fs';
import { link, realpath, unlink } from 'node:fs/promises';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import {
  Limits,
  result,
  type AgentFile,
  type AgentFileOperation,
  type EdgeAgentResult,
  type EdgeAgentRPCRequest,
} from '#contracts';
import { EdgeStatusError } from '../common/edge-errors.js';
import { randomId } from '../common/random.js';
import { ATTACHMENTS_DIR, AttachmentSnapshots, type PreparedAttachments } from './attachments.js';
import { EscapeError, clientPath, refuseHardLinked, walk } from './confined-dir.js';
import { listDirectories } from './directories.js';
import { imageFormat, isImageName } from './images.js';
import {
  disposeTransfer,
  readChunk,
  Transfers,
  type Download,
  type Transfer,
  type TransferScope,
  type Upload,
} from './transfers.js';

export const FILES_OPTIONS = Symbol('FILES_OPTIONS');

export interface FilesOptions {
  homeDir: string;
  /** The edge's own directory; image snapshots for the agent live below it. */
  dataDir: string;
  /** Tests shorten the idle lifetime of transfers. */
  transferIdleMs?: number;
}

/** What the files service needs of a live session (LiveSession has it). */
export interface FileSession {
  readonly id: string;
  readonly owner: string;
  readonly access: string;
  /** Resolved session directory: the root of every file path. */
  readonly cwd: string;
  /** Resolved saved project the session was started for. */
  readonly projectRoot: string;
}

const UPLOAD_PREFIX = '.upload-';
const PRIVATE_DIR_MODE = 0o700;
const PRIVATE_FILE_MODE = 0o600;
const { O_RDONLY, O_RDWR, O_CREAT, O_EXCL } = constants;

function scopeOf(rpc: EdgeAgentRPCRequest, session: FileSession): TransferScope {
  return { owner: rpc.actor_id, access: rpc.request.access_id ?? '', sessionId: session.id };
}

/** Any failure inside a transfer ends it with `invalid_request` (reference §2.3 file_write). */
function transferFailure(error: unknown): EdgeStatusError {
  if (error instanceof EdgeStatusError && error.status === 'invalid_request') return error;
  return new EdgeStatusError('invalid_request', 'The transfer failed.');
}

@Injectable()
export class FilesService implements OnModuleDestroy {
  private readonly log = new Logger(FilesService.name);
  private readonly transfers: Transfers;
  readonly attachments: AttachmentSnapshots;

  constructor(@Inject(FILES_OPTIONS) private readonly options: FilesOptions) {
    this.transfers = new Transfers(options.transferIdleMs ?? Limits.FILE_TRANSFER_IDLE_MS, disposeTransfer);
    this.attachments = new AttachmentSnapshots(options.dataDir);
  }

  get liveTransfers(): number {
    return this.transfers.size;
  }

  /** `directories`; the caller has applied the unsupported-account rule. */
  directories(rpc: EdgeAgentRPCRequest): Promise<EdgeAgentResult> {
    return listDirectories([this.options.homeDir, rpc.project_root], rpc.request.directory ?? '');
  }

  /** One file_* action on a session the caller already matched to (owner, access). */
  async handle(rpc: EdgeAgentRPCRequest, session: FileSession): Promise<EdgeAgentResult> {
    await this.requireBinding(rpc, session);
    const op: AgentFileOperation = rpc.request.file ?? {};
    switch (rpc.request.action) {
      case 'file_list':
        return this.list(session, op.path ?? '');
      case 'file_begin':
        return this.begin(rpc, session, op);
      case 'file_write':
        return this.write(rpc, session, op);
      case 'file_commit':
        return this.commit(rpc, session, op);
      case 'file_cancel':
        return this.cancel(rpc, session, op);
      case 'file_read':
        return op.transfer_id ? this.readMore(rpc, session, op) : this.readFirst(rpc, session, op);
      default:
        throw new EdgeStatusError('invalid_request', 'Not a file action.');
    }
  }

  /**
   * Saved sessions only, and only while the saved project still resolves to the session's: a
   * transient session, or a project moved away, has no files (reference §2.3, §9.16).
   */
  private async requireBinding(rpc: EdgeAgentRPCRequest, session: FileSession): Promise<void> {
    const access = rpc.request.access_id ?? '';
    if (!access || session.access !== access || session.owner !== rpc.actor_id || !rpc.project_root) {
      throw new EdgeStatusError('not_found', 'No files for this session.');
    }
    const root = await realpath(rpc.project_root).catch(() => undefined);
    if (root !== session.projectRoot) throw new EdgeStatusError('not_found', 'No files for this session.');
  }

  // ---- file_list ----

  private async list(session: FileSession, path: string): Promise<EdgeAgentResult> {
    const components = clientPath(path);
    const dir = await walk(session.cwd, components);
    try {
      const { names, more } = await dir.names(Limits.DIRECTORY_READ_MAX);
      const files: AgentFile[] = [];
      for (const name of names) {
        if (name.startsWith(UPLOAD_PREFIX)) continue;
        const stats = await dir.lstatEntry(name).catch(() => undefined);
        // lstat: symlinks and special files are skipped, never followed.
        if (!stats || (!stats.isDirectory() && !stats.isFile())) continue;
        const rel = [...components, name].join('/');
        files.push(
          stats.isDirectory()
            ? { name, path: rel, directory: true }
            : { name, path: rel, size: stats.size, directory: false },
        );
      }
      files.sort((a, b) =>
        a.directory === b.directory ? ((a.name ?? '') < (b.name ?? '') ? -1 : 1) : a.directory ? -1 : 1,
      );
      await dir.verify();
      const truncated = more || files.length > Limits.FILE_LIST_MAX;
      return result('ok', { files: files.slice(0, Limits.FILE_LIST_MAX), truncated });
    } finally {
      await dir.close();
    }
  }

  // ---- uploads ----

  private async begin(
    rpc: EdgeAgentRPCRequest,
    session: FileSession,
    op: AgentFileOperation,
  ): Promise<EdgeAgentResult> {
    const name = op.name ?? '';
    const size = op.size ?? 0;
    const image = isImageName(name);
    if (image && size > Limits.IMAGE_MAX_BYTES)
      throw new EdgeStatusError('invalid_request', 'The image is too large.');
    this.transfers.requireRoom();
    const id = randomId();
    const dir = await walk(session.cwd, [ATTACHMENTS_DIR, session.id], { mode: PRIVATE_DIR_MODE });
    const temp = `${UPLOAD_PREFIX}${id}`;
    let opened;
    try {
      opened = await dir.openFile(temp, O_RDWR | O_CREAT | O_EXCL, PRIVATE_FILE_MODE);
    } catch (error) {
      await dir.close();
      throw error;
    }
    const upload: Upload = {
      kind: 'upload',
      id,
      ...scopeOf(rpc, session),
      dir,
      handle: opened.handle,
      stats: opened.stats,
      size,
      offset: 0,
      inUse: true,
      idleSince: Date.now(),
      temp,
      final: `${id}-${name}`,
      name,
      image,
    };
    try {
      this.transfers.add(upload);
    } catch (error) {
      // Another begin took the last slot while this one created its file.
      await disposeTransfer(upload);
      throw error;
    }
    this.transfers.release(upload);
    return result('ok', { transfer_id: id, file_offset: 0 });
  }

  /** Runs `work` on the caller's transfer; any failure removes the transfer. */
  private async using<T extends Transfer>(
    rpc: EdgeAgentRPCRequest,
    session: FileSession,
    id: string,
    kind: T['kind'] | undefined,
    work: (transfer: T) => Promise<EdgeAgentResult>,
  ): Promise<EdgeAgentResult> {
    const transfer = this.transfers.take(id, scopeOf(rpc, session), kind) as T;
    try {
      const reply = await work(transfer);
      this.transfers.release(transfer);
      return reply;
    } catch (error) {
      await this.transfers.remove(transfer);
      throw transferFailure(error);
    }
  }

  private write(
    rpc: EdgeAgentRPCRequest,
    session: FileSession,
    op: AgentFileOperation,
  ): Promise<EdgeAgentResult> {
    return this.using<Upload>(rpc, session, op.transfer_id ?? '', 'upload', async (upload) => {
      const data = Buffer.from(op.data ?? '', 'base64');
      const offset = op.offset ?? 0;
      if (offset !== upload.offset || offset + data.length > upload.size) {
        throw new EdgeStatusError('invalid_request', 'The offset does not match the transfer.');
      }
      // The temp file must still be ours, where we created it: a swapped directory or file ends it.
      await upload.dir.checkEntry(upload.temp, upload.stats);
      let written = 0;
      while (written < data.length) {
        const { bytesWritten } = await upload.handle.write(
          data,
          written,
          data.length - written,
          offset + written,
        );
        written += bytesWritten;
      }
      upload.offset += data.length;
      return result('ok', { transfer_id: upload.id, file_offset: upload.offset });
    });
  }

  private commit(
    rpc: EdgeAgentRPCRequest,
    session: FileSession,
    op: AgentFileOperation,
  ): Promise<EdgeAgentResult> {
    return this.using<Upload>(rpc, session, op.transfer_id ?? '', 'upload', async (upload) => {
      if (upload.offset !== upload.size)
        throw new EdgeStatusError('invalid_request', 'The upload is incomplete.');
      await upload.handle.sync();
      const current = await upload.handle.stat();
      if (current.size !== upload.size) throw new EdgeStatusError('invalid_request', 'The upload changed.');
      let mediaType: string | undefined;
      if (upload.image) {
        const data = Buffer.alloc(upload.size);
        const { bytesRead } = await upload.handle.read(data, 0, upload.size, 0);
        const format = bytesRead === upload.size ? imageFormat(data) : undefined;
        if (!format)
          throw new EdgeStatusError('invalid_request', 'The image is not a valid png, jpeg or gif.');
        mediaType = `image/${format}`;
      }
      await upload.dir.checkEntry(upload.temp, upload.stats);
      // link(2) fails with EEXIST instead of replacing: an upload never overwrites a file.
      try {
        await link(upload.dir.entry(upload.temp), upload.dir.entry(upload.final));
      } catch {
        throw new EdgeStatusError('invalid_request', 'The file could not be published.');
      }
      try {
        await upload.dir.checkEntry(upload.final, upload.stats);
      } catch (error) {
        // Never leave a published name behind a transfer that failed.
        await unlink(upload.dir.entry(upload.final)).catch(() => undefined);
        throw error;
      }
      await upload.dir.sync();
      await this.transfers.remove(upload);
      const file: AgentFile = {
        name: upload.name,
        path: `${ATTACHMENTS_DIR}/${session.id}/${upload.final}`,
        size: upload.size,
        ...(mediaType ? { media_type: mediaType } : {}),
      };
      this.log.log(`Session ${session.id} published upload ${upload.id} (${upload.size} bytes).`);
      return result('ok', { file, file_done: true });
    });
  }

  private cancel(
    rpc: EdgeAgentRPCRequest,
    session: FileSession,
    op: AgentFileOperation,
  ): Promise<EdgeAgentResult> {
    return this.using<Transfer>(rpc, session, op.transfer_id ?? '', undefined, async (transfer) => {
      await this.transfers.remove(transfer);
      return result('ok');
    });
  }

  // ---- reads ----

  private async readFirst(
    rpc: EdgeAgentRPCRequest,
    session: FileSession,
    op: AgentFileOperation,
  ): Promise<EdgeAgentResult> {
    const components = clientPath(op.path ?? '');
    const entry = components.pop();
    if (entry === undefined) throw new EscapeError('A file path is required.');
    const dir = await walk(session.cwd, components);
    let opened;
    try {
      opened = await dir.openFile(entry, O_RDONLY);
    } catch (error) {
      await dir.close();
      throw error;
    }
    const download: Download = {
      kind: 'read',
      id: randomId(),
      ...scopeOf(rpc, session),
      dir,
      handle: opened.handle,
      stats: opened.stats,
      size: opened.stats.size,
      offset: 0,
      inUse: true,
      idleSince: Date.now(),
      entry,
      path: [...components, entry].join('/'),
    };
    try {
      if (!opened.stats.isFile() || opened.stats.size > Limits.FILE_SIZE_MAX_BYTES) {
        throw new EdgeStatusError('invalid_request', 'Only regular files up to the size limit can be read.');
      }
      refuseHardLinked(opened.stats);
      const reply = await readChunk(download);
      if (reply.file_done) {
        await disposeTransfer(download);
        return reply;
      }
      this.transfers.add(download);
      this.transfers.release(download);
      return { ...reply, transfer_id: download.id };
    } catch (error) {
      await disposeTransfer(download);
      throw error;
    }
  }

  private readMore(
    rpc: EdgeAgentRPCRequest,
    session: FileSession,
    op: AgentFileOperation,
  ): Promise<EdgeAgentResult> {
    return this.using<Download>(rpc, session, op.transfer_id ?? '', 'read', async (download) => {
      if ((op.offset ?? 0) !== download.offset)
        throw new EdgeStatusError('invalid_request', 'The offset does not match the transfer.');
      const reply = await readChunk(download);
      if (reply.file_done) await this.transfers.remove(download);
      return { ...reply, transfer_id: download.id };
    });
  }

  // ---- lifetime ----

  /** Attachments of a send (reference §2.3 "Attachments on send"). */
  prepareAttachments(session: FileSession, paths: readonly string[]): Promise<PreparedAttachments> {
    return this.attachments.prepare(session, paths);
  }

  /** A session closed: its transfers end and its image snapshots are deleted. */
  async sessionClosed(sessionId: string): Promise<void> {
    await this.transfers.removeWhere((transfer) => transfer.sessionId === sessionId);
    await this.attachments.dropSession(sessionId);
  }

  async onModuleDestroy(): Promise<void> {
    await this.transfers.clear();
    await this.attachments.dropAll();
  }
}
