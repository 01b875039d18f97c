import type { ActivityBody, Entry, MessageBody } from './rounds.js';

export interface TurnNote {
  traceId?: string;
  dispatch_ms?: number | null;
  first_reply_ms?: number | null;
  finished_ms?: number | null;
  request_service_ms?: number | null;
}

export function Diff({ text }: { text: string }) {
  return (
    <pre class="diff" tabIndex={0}>
      {text.split('\n').map((line, i) => (
        <span key={i} class={line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : undefined}>
          {line}
          {'\n'}
        </span>
      ))}
    </pre>
  );
}

function Message({ body }: { body: MessageBody }) {
  const who = body.role === 'user' ? 'You' : 'Agent';
  return (
    <article class={`msg ${body.role === 'user' ? 'user' : 'agent'}`} aria-label={`${who} said`}>
      <h3 class="who">{who}</h3>
      <p class="text">{body.text || (body.role === 'assistant' ? '…' : '')}</p>
      {body.attachments?.length ? (
        <ul class="attachments" aria-label="Attachments">
          {body.attachments.map((file) => (
            <li key={file.path}>{file.name ?? file.path}</li>
          ))}
        </ul>
      ) : null}
    </article>
  );
}

function Activity({ body }: { body: ActivityBody }) {
  const label =
    body.kind === 'commandExecution' ? 'Command' : body.kind === 'fileChange' ? 'File change' : body.kind;
  return (
    <details class={`activity ${body.status ?? ''}`}>
      <summary>
        {label}
        {body.command ? <code> {body.command}</code> : null} ·{' '}
        <span class="status">{body.status ?? 'running'}</span>
        {body.exit_code !== undefined && body.exit_code !== null ? ` · exit ${body.exit_code}` : ''}
        {body.duration_ms ? ` · ${body.duration_ms} ms` : ''}
      </summary>
      {body.directory && <p class="mono">in {body.directory}</p>}
      {body.output && <pre tabIndex={0}>{body.output}</pre>}
      {body.changes?.map((change, i) => (
        <div key={i}>
          <p class="mono">
            {change.kind} {change.path}
            {change.move_path ? ` → ${change.move_path}` : ''}
          </p>
          {change.diff && <Diff text={change.diff} />}
        </div>
      ))}
      {body.truncated && <p class="muted">Output shortened.</p>}
    </details>
  );
}

export function EntryView({ entry }: { entry: Entry }) {
  if (entry.item.oversize) return <p class="muted">This item is too large to show here.</p>;
  if (!entry.body) return null;
  return entry.body.type === 'message' ? <Message body={entry.body} /> : <Activity body={entry.body} />;
}

function ms(value: number | null | undefined): string {
  return value === undefined || value === null ? '–' : `${Math.round(value)} ms`;
}

export function RoundHeader({
  window,
  live,
  note,
  traceTemplate,
}: {
  window: number;
  live: boolean;
  note: TurnNote | undefined;
  traceTemplate: string | null;
}) {
  const trace = note?.traceId && traceTemplate ? traceTemplate.replace('{trace_id}', note.traceId) : null;
  return (
    <header class="round">
      <h2>
        Round {window + 1}
        {live ? ' (current)' : ''}
      </h2>
      {note && (
        <p class="timing" aria-label={`Timing of round ${window + 1}`}>
          dispatch {ms(note.dispatch_ms)} · first reply {ms(note.first_reply_ms)} · finished{' '}
          {ms(note.finished_ms)}
          {note.request_service_ms !== undefined && note.request_service_ms !== null
            ? ` · api ${ms(note.request_service_ms)}`
            : ''}
          {trace && (
            <>
              {' · '}
              <a href={trace} target="_blank" rel="noopener noreferrer">
                trace
              </a>
            </>
          )}
        </p>
      )}
    </header>
  );
}
