// What the agent waits for: approvals of commands and file changes (with their diffs) and
// answers to its questions. Each is answered once (reference §2.3 approve/answer).
import { useState } from 'preact/hooks';
import type { Approval, InputRequest } from '../../../../libs/contracts/src/edge-agent.js';
import { Diff } from './entries.js';

export function ApprovalCard({
  approval,
  disabled,
  onDecide,
}: {
  approval: Approval;
  disabled: boolean;
  onDecide: (decision: 'accept' | 'decline') => void;
}) {
  const isFile = approval.kind === 'fileChange' || (approval.changes?.length ?? 0) > 0;
  const title = isFile ? 'The agent wants to change files' : 'The agent wants to run a command';
  return (
    <section class="prompt card" aria-label={title}>
      <h3>{title}</h3>
      {approval.reason && <p>{approval.reason}</p>}
      {approval.command && <pre tabIndex={0}>{approval.command}</pre>}
      {approval.directory && <p class="mono">in {approval.directory}</p>}
      {approval.changes?.map((change, i) => (
        <div key={i}>
          <p class="mono">
            {change.kind} {change.path}
          </p>
          {change.diff && <Diff text={change.diff} />}
        </div>
      ))}
      <div class="row">
        <button type="button" class="primary" disabled={disabled} onClick={() => onDecide('accept')}>
          Approve
        </button>
        <button type="button" disabled={disabled} onClick={() => onDecide('decline')}>
          Decline
        </button>
      </div>
    </section>
  );
}

export function InputCard({
  request,
  disabled,
  onAnswer,
}: {
  request: InputRequest;
  disabled: boolean;
  onAnswer: (answers: { question_id: string; answers: string[] }[]) => void;
}) {
  const [values, setValues] = useState<Record<string, string>>({});
  const questions = request.questions ?? [];
  const complete = questions.every((q) => (values[q.id] ?? '').trim() !== '');
  return (
    <form
      class="prompt card"
      aria-label="The agent asks"
      onSubmit={(event) => {
        event.preventDefault();
        onAnswer(questions.map((q) => ({ question_id: q.id, answers: [(values[q.id] ?? '').trim()] })));
      }}
    >
      {questions.map((q) => (
        <fieldset key={q.id}>
          <legend>{q.header ? `${q.header}: ${q.question ?? ''}` : q.question}</legend>
          {q.options?.map((option) => (
            <label key={option.label} class="choice">
              <input
                type="radio"
                name={`${request.id}-${q.id}`}
                value={option.label}
                checked={values[q.id] === option.label}
                onChange={() => setValues({ ...values, [q.id]: option.label })}
              />
              {option.label}
              {option.description ? <span class="muted"> — {option.description}</span> : null}
            </label>
          ))}
          {(!q.options?.length || q.is_other) && (
            <label>
              {q.options?.length ? 'Other answer' : 'Answer'}
              {q.is_secret ? (
                <input
                  type="password"
                  maxLength={4096}
                  value={values[q.id] ?? ''}
                  onInput={(e) => setValues({ ...values, [q.id]: e.currentTarget.value })}
                />
              ) : (
                <input
                  type="text"
                  maxLength={4096}
                  value={q.options?.some((o) => o.label === values[q.id]) ? '' : (values[q.id] ?? '')}
                  onInput={(e) => setValues({ ...values, [q.id]: e.currentTarget.value })}
                />
              )}
            </label>
          )}
        </fieldset>
      ))}
      <button type="submit" class="primary" disabled={disabled || !complete}>
        Answer
      </button>
    </form>
  );
}
