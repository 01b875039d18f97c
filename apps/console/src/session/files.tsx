// The project's files on the edge (reference §2.3 file_*): list, download and upload within the
// contract's limits. Uploads land in the session's attachments folder and can be attached to the
// next message.
import { useEffect, useState } from 'preact/hooks';
import type { AgentFile } from '../../../../libs/contracts/src/edge-agent.js';
import { agent, expectOk } from '../api.js';
import type { SessionScope } from './journal.js';
import { download, saveBlob, sizeText, upload, uploadProblem } from './transfers.js';

interface Props {
  scope: SessionScope;
  disabledReason: string | null;
  onUploaded: (file: AgentFile) => void;
}

export function FileBrowser({ scope, disabledReason, onUploaded }: Props) {
  const { path, files, message, busy, list, fetchFile, send } = useProjectFiles(
    scope,
    disabledReason,
    onUploaded,
  );
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
                if (file) void send(file);
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
              <FileRow
                key={file.path}
                file={file}
                busy={busy}
                onOpen={() => void list(file.path ?? '')}
                onDownload={() => void fetchFile(file)}
              />
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

/** One entry of the folder: a folder opens, a file downloads. */
function FileRow(props: { file: AgentFile; busy: boolean; onOpen: () => void; onDownload: () => void }) {
  const { file } = props;
  return (
    <li>
      {file.directory ? (
        <button type="button" class="link" onClick={props.onOpen}>
          {file.name}/
        </button>
      ) : (
        <>
          <span>{file.name}</span> <span class="muted">{sizeText(file.size)}</span>{' '}
          <button
            type="button"
            disabled={props.busy}
            onClick={props.onDownload}
            aria-label={`Download ${file.name}`}
          >
            Download
          </button>
        </>
      )}
    </li>
  );
}

/** The folder shown, its listing, and the transfers in and out of it (one at a time). */
function useProjectFiles(
  scope: SessionScope,
  disabledReason: string | null,
  onUploaded: (file: AgentFile) => void,
) {
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

  const fetchFile = async (file: AgentFile) => {
    setBusy(true);
    setMessage(null);
    try {
      saveBlob(await download(base, file.path ?? ''), file.name ?? 'download');
    } catch (e) {
      setMessage((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const send = async (file: File) => {
    const problem = uploadProblem(file);
    setMessage(problem);
    if (problem) return;
    setBusy(true);
    try {
      const stored = await upload(base, file, (percent) =>
        setMessage(`Uploading ${file.name}: ${percent} %`),
      );
      setMessage(`Uploaded ${file.name}.`);
      if (stored) onUploaded(stored);
      await list(path, true);
    } catch (e) {
      setMessage((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return { path, files, message, busy, list, fetchFile, send };
}
