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
  const [models, setModels] = useState<AgentModel[] | null>(null);
  const [modelError, setModelError] = useState<string | null>(null);
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
  const loadModels = async () => {
    if (models) return;
    setModelError(null);
    try {
      setModels(expectOk(await agent({ ...base, action: 'models' })).models ?? []);
    } catch (e) {
      setModelError((e as Error).message);
    }
  };

  return (
    <form class="composer card" onSubmit={submit} aria-label="Message the agent">
      {props.attachments.length > 0 && (
        <ul class="attachments" aria-label="Attached to the next message">
          {props.attachments.map((file) => (
            <li key={file.path}>
              {file.name}{' '}
              <button
                type="button"
                class="link"
                onClick={() => props.onRemoveAttachment(file.path ?? '')}
                aria-label={`Remove ${file.name}`}
              >
                remove
              </button>
            </li>
          ))}
        </ul>
      )}
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
        <label>
          Model
          <select
            value={snapshot?.model ?? ''}
            disabled={Boolean(disabledReason) || running || busy}
            onFocus={() => void loadModels()}
            onMouseDown={() => void loadModels()}
            onChange={(e) => {
              const model = e.currentTarget.value;
              if (model) props.onAct(() => agent({ ...base, action: 'model', model }));
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
        <label>
          Permissions
          <select
            value={snapshot?.permission_mode ?? 'read-only'}
            disabled={Boolean(disabledReason) || running || busy || !snapshot?.permissions_available}
            onChange={(e) => {
              const mode = e.currentTarget.value;
              props.onAct(() => agent({ ...base, action: 'permissions', permission_mode: mode }));
            }}
          >
            <option value="read-only">Read-only</option>
            <option value="workspace-write">Write in the project</option>
          </select>
        </label>
      </div>
      {modelError && <p class="error">{modelError}</p>}
    </form>
  );
}
