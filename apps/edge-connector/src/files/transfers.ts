// Live file transfers of one edge: at most FILE_TRANSFERS_MAX, each scoped to (owner, access,
// session), used by one RPC at a time, and dropped after FILE_TRANSFER_IDLE_MS without use. One
// timer serves every transfer: it is armed for the earliest deadline. A download's chunks and the
// release of what a transfer holds live here too, beside the state they work on.
import type { Stats } from 'node:fs';
import { unlink, type FileHandle } from 'node:fs/promises';
import { Limits, result, type EdgeAgentResult } from '#contracts';
import { EdgeStatusError } from '../common/edge-errors.js';
import { refuseHardLinked, type ConfinedDir } from './confined-dir.js';

export interface TransferScope {
  owner: string;
  access: string;
  sessionId: string;
}

interface TransferCommon extends TransferScope {
  id: string;
  dir: ConfinedDir;
  handle: FileHandle;
  /** fstat of the open file when the transfer began: swaps and changes are measured against it. */
  stats: Stats;
  size: number;
  offset: number;
  inUse: boolean;
  idleSince: number;
}

export interface Upload extends TransferCommon {
  kind: 'upload';
  /** `.upload-<id>` inside `dir`. */
  temp: string;
  /** `<id>-<name>`, published at commit. */
  final: string;
  name: string;
  image: boolean;
}

export interface Download extends TransferCommon {
  kind: 'read';
  /** The file's entry name inside `dir`, and the client path it was asked by. */
  entry: string;
  path: string;
}

export type Transfer = Upload | Download;

export class Transfers {
  private readonly live = new Map<string, Transfer>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly idleMs: number,
    /** Releases what a dropped transfer holds (closes files, removes an upload's temp file). */
    private readonly dispose: (transfer: Transfer) => Promise<void>,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.live.size;
  }

  /** Refuses a new transfer when the edge already holds FILE_TRANSFERS_MAX. */
  requireRoom(): void {
    if (this.live.size >= Limits.FILE_TRANSFERS_MAX)
      throw new EdgeStatusError('busy', 'Too many file transfers.');
  }

  /** Registers a transfer already marked in use by the RPC that created it. */
  add(transfer: Transfer): void {
    this.requireRoom();
    this.live.set(transfer.id, transfer);
  }

  /** The caller's own transfer (of this kind, when given), marked in use; foreign or unknown is `not_found`. */
  take(id: string, scope: TransferScope, kind?: Transfer['kind']): Transfer {
    const transfer = this.live.get(id);
    if (
      !transfer ||
      (kind !== undefined && transfer.kind !== kind) ||
      transfer.owner !== scope.owner ||
      transfer.access !== scope.access ||
      transfer.sessionId !== scope.sessionId
    ) {
      throw new EdgeStatusError('not_found', 'No such transfer.');
    }
    if (transfer.inUse) throw new EdgeStatusError('busy', 'The transfer is in use.');
    transfer.inUse = true;
    return transfer;
  }

  /** The RPC using the transfer is done; its idle clock starts again. */
  release(transfer: Transfer): void {
    if (this.live.get(transfer.id) !== transfer) return;
    transfer.inUse = false;
    transfer.idleSince = this.now();
    this.arm();
  }

  /** Drops a transfer and what it holds; idempotent. */
  async remove(transfer: Transfer): Promise<void> {
    if (this.live.get(transfer.id) === transfer) this.live.delete(transfer.id);
    await this.dispose(transfer);
  }

  async removeWhere(match: (transfer: Transfer) => boolean): Promise<void> {
    const doomed = [...this.live.values()].filter(match);
    await Promise.allSettled(doomed.map((transfer) => this.remove(transfer)));
  }

  async clear(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.removeWhere(() => true);
  }

  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    let earliest = Infinity;
    for (const transfer of this.live.values()) {
      if (!transfer.inUse) earliest = Math.min(earliest, transfer.idleSince + this.idleMs);
    }
    if (earliest === Infinity) return;
    this.timer = setTimeout(() => void this.sweep(), Math.max(0, earliest - this.now()));
    this.timer.unref();
  }

  private async sweep(): Promise<void> {
    this.timer = null;
    const now = this.now();
    await this.removeWhere((transfer) => !transfer.inUse && now - transfer.idleSince >= this.idleMs);
    this.arm();
  }
}

/** The next chunk of a download; the file must be the same inode, size and mtime as when the read began. */
export async function readChunk(download: Download): Promise<EdgeAgentResult> {
  const current = await download.handle.stat();
  if (current.size !== download.stats.size || current.mtimeMs !== download.stats.mtimeMs) {
    throw new EdgeStatusError('invalid_request', 'The file changed during the read.');
  }
  // A link made after the read began counts too: every chunk is refused from then on.
  refuseHardLinked(current);
  await download.dir.checkEntry(download.entry, download.stats);
  const length = Math.min(Limits.FILE_CHUNK_MAX_BYTES, download.size - download.offset);
  const data = Buffer.alloc(length);
  let read = 0;
  while (read < length) {
    const { bytesRead } = await download.handle.read(data, read, length - read, download.offset + read);
    if (bytesRead === 0) throw new EdgeStatusError('invalid_request', 'The file shrank during the read.');
    read += bytesRead;
  }
  download.offset += length;
  return result('ok', {
    file: { name: download.entry, path: download.path, size: download.size },
    file_data: data.toString('base64'),
    file_offset: download.offset,
    file_done: download.offset === download.size,
  });
}

/** Releases what a transfer holds: its file, an upload's temp file, its directory. */
export async function disposeTransfer(transfer: Transfer): Promise<void> {
  await transfer.handle.close().catch(() => undefined);
  if (transfer.kind === 'upload') {
    // Through the open directory, so the temp file is removed where it really is, even if the
    // directory was moved; never through a path that might now be a symlink.
    await unlink(transfer.dir.entry(transfer.temp)).catch(() => undefined);
  }
  await transfer.dir.close();
}
