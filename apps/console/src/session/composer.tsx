import { useState } from 'preact/hooks';
import type { AgentFile, AgentModel, EdgeAgentResult } from '../../../../libs/contracts/src/edge-agent.js';
import { TEXT_MAX_BYTES } from '../../../../libs/contracts/src/limits.js';
import { agent, expectOk } from '../api.js';

interface Props {
  snapshot: EdgeAgentResult | null;
  base: { edge_id: string; access_id: string; session_id: string };
  busy: boolean;
  disabledReason: string | null;
  attachments: AgentFile[];
  onRemoveAttachment: (path: string) => void;
  onSend: (text: string) => void;
  onAct: (run: () => Promise<EdgeAgentResult>) => void;
  canResume: boolean;
}

export function Composer(props: Props) {
  const { snapshot, base, busy, disabledReason } = props;
  const [text, setText] = useState('');
  const { models, modelError, loadModels } = useModels(base);
  const running = snapshot?.running ?? false;
  const tooLong = new TextEncoder().encode(text).length > TEXT_MAX_BYTES;
  const canSend =
    !disabledReason && !busy && !running && !tooLong && (text.trim() !== '' || props.attachments.length > 0);

  const submit = (event: Event) => {
    event.preventDefault();
    if (!canSend) return;
    props.onSend(text.trim());
    setText('');
  };
  return (
    <form class="composer card" onSubmit={submit} aria-label="Message the agent">
      <AttachmentList attachments={props.attachments} onRemove={props.onRemoveAttachment} />
      <label for="composer-text">Message</label>
      <textarea
        id="composer-text"
        rows={3}
        value={text}
        disabled={Boolean(disabledReason)}
        aria-describedby={disabledReason ? 'composer-reason' : undefined}
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) submit(e);
        }}
      />
      {tooLong && <p class="error">The message is longer than {TEXT_MAX_BYTES} bytes.</p>}
      {disabledReason && (
        <p id="composer-reason" class="muted">
          {disabledReason}
        </p>
      )}
      <div class="row">
        <button type="submit" class="primary" disabled={!canSend}>
          Send
        </button>
        <button
          type="button"
          disabled={!running || Boolean(disabledReason) || busy}
          onClick={() => props.onAct(() => agent({ ...base, action: 'interrupt' }))}
        >
          Interrupt
        </button>
        {props.canResume && (
          <button
            type="button"
            disabled={busy}
            onClick={() => props.onAct(() => agent({ ...base, action: 'resume' }))}
          >
            Resume session
          </button>
        )}
        <ModelSelect
          snapshot={snapshot}
          models={models}
          disabled={Boolean(disabledReason) || running || busy}
          onOpen={() => void loadModels()}
          onPick={(model) => props.onAct(() => agent({ ...base, action: 'model', model }))}
        />
        <PermissionSelect
          mode={snapshot?.permission_mode ?? 'read-only'}
          disabled={Boolean(disabledReason) || running || busy || !snapshot?.permissions_available}
          onPick={(mode) =>
            props.onAct(() => agent({ ...base, action: 'permissions', permission_mode: mode }))
          }
        />
      </div>
      {modelError && <p class="error">{modelError}</p>}
    </form>
  );
}

/** The session's model catalog, read once when the model menu is first opened. */
function useModels(base: Props['base']) {
  const [models, setModels] = useState<AgentModel[] | null>(null);
  const [modelError, setModelError] = useState<string | null>(null);
  const loadModels = async () => {
    if (models) return;
    setModelError(null);
    try {
      setModels(expectOk(await agent({ ...base, action: 'models' })).models ?? []);
    } catch (e) {
      setModelError((e as Error).message);
    }
  };
  return { models, modelError, loadModels };
}

/** The files uploaded for the next message, each removable. */
function AttachmentList(props: { attachments: AgentFile[]; onRemove: (path: string) => void }) {
  if (props.attachments.length === 0) return null;
  return (
    <ul class="attachments" aria-label="Attached to the next message">
      {props.attachments.map((file) => (
        <li key={file.path}>
          {file.name}{' '}
          <button
            type="button"
            class="link"
            onClick={() => props.onRemove(file.path ?? '')}
            aria-label={`Remove ${file.name}`}
          >
            remove
          </button>
        </li>
      ))}
    </ul>
  );
}

/** The model menu: the current model first, the catalog once it is read. */
function ModelSelect(props: {
  snapshot: EdgeAgentResult | null;
  models: AgentModel[] | null;
  disabled: boolean;
  onOpen: () => void;
  onPick: (model: string) => void;
}) {
  const { snapshot, models } = props;
  return (
    <label>
      Model
      <select
        value={snapshot?.model ?? ''}
        disabled={props.disabled}
        onFocus={props.onOpen}
        onMouseDown={props.onOpen}
        onChange={(e) => {
          const model = e.currentTarget.value;
          if (model) props.onPick(model);
        }}
      >
        <option value={snapshot?.model ?? ''}>{snapshot?.model || 'Default model'}</option>
        {models
          ?.filter((m) => m.id !== snapshot?.model)
          .map((m) => (
            <option key={m.id} value={m.id}>
              {m.name ?? m.id}
            </option>
          ))}
      </select>
    </label>
  );
}

/** The permission mode of the next turns. */
function PermissionSelect(props: { mode: string; disabled: boolean; onPick: (mode: string) => void }) {
  return (
    <label>
      Permissions
      <select
        value={props.mode}
        disabled={props.disabled}
        onChange={(e) => props.onPick(e.currentTarget.value)}
      >
        <option value="read-only">Read-only</option>
        <option value="workspace-write">Write in the project</option>
      </select>
    </label>
  );
}
