// The project's files on the edge (reference §2.3 file_*): list, download in chunks, upload in
// chunks within the contract's limits. Uploads land in the session's attachments folder and can
// be attached to the next message.
import { useEffect, useState } from 'preact/hooks';
import type { AgentFile } from '../../../../libs/contracts/src/edge-agent.js';
import {
  FILE_CHUNK_MAX_BYTES,
  FILE_NAME_MAX_BYTES,
  FILE_SIZE_MAX_BYTES,
} from '../../../../libs/contracts/src/limits.js';
import { agent, expectOk } from '../api.js';
import type { SessionScope } from './journal.js';

/** Images are checked by the edge and must stay under 4 MiB (reference §2.3 file_begin). */
const IMAGE_MAX_BYTES = 4 * 1024 * 1024;
const IMAGE_NAME = /\.(png|jpe?g|gif)$/i;

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

interface Props {
  scope: SessionScope;
  disabledReason: string | null;
  onUploaded: (file: AgentFile) => void;
}

export function FileBrowser({ scope, disabledReason, onUploaded }: Props) {
  const base = { edge_id: scope.edgeId, access_id: scope.accessId, session_id: scope.sessionId };
  const [path, setPath] = useState('');
  const [files, setFiles] = useState<AgentFile[] | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const list = async (at: string, keepMessage = false) => {
    if (!keepMessage) setMessage(null);
    try {
      const result = expectOk(await agent({ ...base, action: 'file_list', file: at ? { path: at } : {} }));
      setFiles(result.files ?? []);
      setPath(at);
    } catch (e) {
      setMessage((e as Error).message);
    }
  };
  useEffect(() => {
    if (!disabledReason) void list('');
    // Deliberate dependency list: re-run only when these inputs change.
  }, [disabledReason]);

  const download = async (file: AgentFile) => {
    setBusy(true);
    setMessage(null);
    try {
      const chunks: Uint8Array<ArrayBuffer>[] = [];
      let result = expectOk(await agent({ ...base, action: 'file_read', file: { path: file.path ?? '' } }));
      for (;;) {
        if (result.file_data) chunks.push(fromBase64(result.file_data));
        if (result.file_done || !result.transfer_id) break;
        result = expectOk(
          await agent({
            ...base,
            action: 'file_read',
            file: { transfer_id: result.transfer_id, offset: result.file_offset ?? 0 },
          }),
        );
      }
      const url = URL.createObjectURL(new Blob(chunks));
      const link = document.createElement('a');
      link.href = url;
      link.download = file.name ?? 'download';
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (e) {
      setMessage((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const upload = async (file: File) => {
    setMessage(null);
    if (file.size > FILE_SIZE_MAX_BYTES)
      return setMessage(`Files are limited to ${sizeText(FILE_SIZE_MAX_BYTES)}.`);
    if (IMAGE_NAME.test(file.name) && file.size > IMAGE_MAX_BYTES)
      return setMessage('Images are limited to 4 MiB.');
    if (new TextEncoder().encode(file.name).length > FILE_NAME_MAX_BYTES || /[/\\:]/.test(file.name)) {
      return setMessage('That file name cannot be used (too long, or with / \\ :).');
    }
    setBusy(true);
    let transfer: string | undefined;
    try {
      const begun = expectOk(
        await agent({ ...base, action: 'file_begin', file: { name: file.name, size: file.size } }),
      );
      transfer = begun.transfer_id;
      for (let offset = 0; offset < file.size; offset += FILE_CHUNK_MAX_BYTES) {
        const chunk = new Uint8Array(await file.slice(offset, offset + FILE_CHUNK_MAX_BYTES).arrayBuffer());
        setMessage(`Uploading ${file.name}: ${Math.round((offset / file.size) * 100)} %`);
        expectOk(
          await agent({
            ...base,
            action: 'file_write',
            file: { transfer_id: transfer, offset, data: toBase64(chunk) },
          }),
        );
      }
      const committed = expectOk(
        await agent({ ...base, action: 'file_commit', file: { transfer_id: transfer } }),
      );
      transfer = undefined;
      setMessage(`Uploaded ${file.name}.`);
      if (committed.file) onUploaded(committed.file);
      await list(path, true);
    } catch (e) {
      setMessage((e as Error).message);
      if (transfer)
        void agent({ ...base, action: 'file_cancel', file: { transfer_id: transfer } }).catch(
          () => undefined,
        );
    } finally {
      setBusy(false);
    }
  };

  const parent = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
  return (
    <section class="files card" aria-labelledby="files-title">
      <h2 id="files-title">Project files</h2>
      {disabledReason ? (
        <p class="muted">{disabledReason}</p>
      ) : (
        <>
          <p class="mono" aria-label="Folder">
            /{path}
          </p>
          <label class="upload">
            Upload a file
            <input
              type="file"
              disabled={busy}
              onChange={(e) => {
                const file = e.currentTarget.files?.[0];
                e.currentTarget.value = '';
                if (file) void upload(file);
              }}
            />
          </label>
          {message && <p role="status">{message}</p>}
          <ul class="filelist">
            {path && (
              <li>
                <button type="button" class="link" onClick={() => void list(parent)}>
                  ../ (up)
                </button>
              </li>
            )}
            {files?.map((file) => (
              <li key={file.path}>
                {file.directory ? (
                  <button type="button" class="link" onClick={() => void list(file.path ?? '')}>
                    {file.name}/
                  </button>
                ) : (
                  <>
                    <span>{file.name}</span> <span class="muted">{sizeText(file.size)}</span>{' '}
                    <button
                      type="button"
                      disabled={busy}
                      onClick={() => void download(file)}
                      aria-label={`Download ${file.name}`}
                    >
                      Download
                    </button>
                  </>
                )}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
