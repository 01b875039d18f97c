// File transfers with the edge in chunks (reference §2.3 file_*): a download is file_read until
// `file_done`; an upload is file_begin, file_write per 128 KiB, file_commit (file_cancel on a
// failure, so the edge frees the transfer at once instead of after its idle timeout).
import type { AgentFile } from '../../../../libs/contracts/src/edge-agent.js';
import {
  FILE_CHUNK_MAX_BYTES,
  FILE_NAME_MAX_BYTES,
  FILE_SIZE_MAX_BYTES,
} from '../../../../libs/contracts/src/limits.js';
import { agent, expectOk } from '../api.js';

/** Images are checked by the edge and must stay under 4 MiB (reference §2.3 file_begin). */
const IMAGE_MAX_BYTES = 4 * 1024 * 1024;
const IMAGE_NAME = /\.(png|jpe?g|gif)$/i;

export interface FileScope {
  edge_id: string;
  access_id: string;
  session_id: string;
}

function toBase64(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const raw = atob(text);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

export function sizeText(size = 0): string {
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KiB`;
  return `${(size / 1024 / 1024).toFixed(1)} MiB`;
}

/** Why the edge would refuse this upload, before a byte is sent; null when it may go. */
export function uploadProblem(file: File): string | null {
  if (file.size > FILE_SIZE_MAX_BYTES) return `Files are limited to ${sizeText(FILE_SIZE_MAX_BYTES)}.`;
  if (IMAGE_NAME.test(file.name) && file.size > IMAGE_MAX_BYTES) return 'Images are limited to 4 MiB.';
  if (new TextEncoder().encode(file.name).length > FILE_NAME_MAX_BYTES || /[/\\:]/.test(file.name)) {
    return 'That file name cannot be used (too long, or with / \\ :).';
  }
  return null;
}

export async function download(scope: FileScope, path: string): Promise<Blob> {
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let result = expectOk(await agent({ ...scope, action: 'file_read', file: { path } }));
  for (;;) {
    if (result.file_data) chunks.push(fromBase64(result.file_data));
    if (result.file_done || !result.transfer_id) break;
    const next = { transfer_id: result.transfer_id, offset: result.file_offset ?? 0 };
    result = expectOk(await agent({ ...scope, action: 'file_read', file: next }));
  }
  return new Blob(chunks);
}

export async function upload(
  scope: FileScope,
  file: File,
  progress: (percent: number) => void,
): Promise<AgentFile | undefined> {
  const begun = expectOk(
    await agent({ ...scope, action: 'file_begin', file: { name: file.name, size: file.size } }),
  );
  const transfer = begun.transfer_id;
  try {
    for (let offset = 0; offset < file.size; offset += FILE_CHUNK_MAX_BYTES) {
      const chunk = new Uint8Array(await file.slice(offset, offset + FILE_CHUNK_MAX_BYTES).arrayBuffer());
      progress(Math.round((offset / file.size) * 100));
      const write = { transfer_id: transfer, offset, data: toBase64(chunk) };
      expectOk(await agent({ ...scope, action: 'file_write', file: write }));
    }
    return expectOk(await agent({ ...scope, action: 'file_commit', file: { transfer_id: transfer } })).file;
  } catch (error) {
    void agent({ ...scope, action: 'file_cancel', file: { transfer_id: transfer } }).catch(() => undefined);
    throw error;
  }
}

/** Hands a blob to the browser as a download named `name`. */
export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  // The click starts the download synchronously; the URL is released once it had time to.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
