import { useEffect, useMemo } from 'preact/hooks';
import type { EdgeAgentResult } from '../../../../libs/contracts/src/edge-agent.js';
import { agent } from '../api.js';
import { useConnectors } from '../hooks.js';
import { NotFoundPage } from '../pages/not-found.js';
import { Composer } from './composer.js';
import { FileBrowser } from './files.js';
import type { SessionScope } from './journal.js';
import { ApprovalCard, InputCard } from './prompts.js';
import { transcript, type Round } from './rounds.js';
import { useRounds, useSessionActions, type RequestBase } from './session-actions.js';
import { useSessionClients, useTurnNotes } from './session-hooks.js';
import { conversationRows, SessionHeader } from './session-view.js';
import { saveBlob } from './transfers.js';
import { VirtualList } from './virtual-list.js';

export function SessionPage(props: SessionScope & { traceTemplate: string | null }) {
  const scope = useMemo(
    () => ({ edgeId: props.edgeId, accessId: props.accessId, sessionId: props.sessionId }),
    [props.edgeId, props.accessId, props.sessionId],
  );
  const { journal: j, live } = useSessionClients(scope);
  const connectors = useConnectors();
  const [notes, note] = useTurnNotes(scope.sessionId);
  const actions = useSessionActions(scope, live, note);
  const { base, error, busy, attachments, setAttachments, act } = actions;

  const snapshot = live.snapshot;
  const window = snapshot?.window ?? 0;
  const timing = snapshot?.turn_timing;
  useEffect(() => {
    if (snapshot && timing && snapshot.history_windowing !== undefined) note(window, { ...timing });
    // Deliberate dependency list: re-run only when these inputs change.
  }, [window, timing?.dispatch_ms, timing?.first_reply_ms, timing?.finished_ms]);
  const rounds = useRounds(j, window, actions.setError);

  if (j.state === 'not-found' || live.notFound) return <NotFoundPage what="session" />;

  const edge = connectors.data?.find((c) => c.id === scope.edgeId);
  const offline = Boolean((edge && !edge.online) || snapshot?.archived);
  const disabledReason = disabledReasonOf(offline, edge?.name ?? scope.edgeId, j.state === 'ended');
  const closed = snapshot?.closed ?? false;
  const rows = conversationRows(rounds.visible, rounds.window, notes, props.traceTemplate);

  return (
    <div class="session">
      <div class="convo">
        <SessionHeader
          title={snapshot?.title || 'New conversation'}
          stream={j.state}
          resumedFrom={j.resumedFrom}
          snapshot={snapshot}
          canShowOlder={rounds.hiddenOlder > 0 || j.hasOlder}
          onShowOlder={() => void rounds.showOlder()}
          onTranscript={() => downloadTranscript(rounds.rounds, snapshot?.title, scope.sessionId)}
        />
        <VirtualList rows={rows} label="Conversation" scrollToTop={rounds.toTop} />
        {disabledReason && (
          <p class="warn" role="status">
            {disabledReason}
          </p>
        )}
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        {!offline && (
          <PromptCards snapshot={snapshot} base={base} busy={busy} onAct={(run) => void act(run)} />
        )}
        <Composer
          snapshot={snapshot}
          base={base}
          busy={busy}
          disabledReason={disabledReason ?? (closed ? 'The session is closed: resume it to continue.' : null)}
          attachments={attachments}
          onRemoveAttachment={(path) => setAttachments(attachments.filter((a) => a.path !== path))}
          onSend={(text) => void actions.send(text)}
          onAct={(run) => void act(run)}
          canResume={closed && !offline}
        />
      </div>
      <FileBrowser
        scope={scope}
        disabledReason={disabledReason}
        onUploaded={(file) =>
          setAttachments((list) => [...list.filter((a) => a.path !== file.path), file].slice(0, 8))
        }
      />
    </div>
  );
}

/** Why the session takes no input now, or null when it does. */
function disabledReasonOf(offline: boolean, edgeName: string, deleted: boolean): string | null {
  if (offline) {
    return `The edge "${edgeName}" is offline: this session is read-only from its history until the edge is back.`;
  }
  return deleted ? 'This session was deleted.' : null;
}

/** The whole conversation held so far, as a Markdown file. */
function downloadTranscript(rounds: Round[], title: string | undefined, sessionId: string): void {
  saveBlob(
    new Blob([transcript(rounds, title || 'Conversation')], { type: 'text/markdown' }),
    `transcript-${sessionId}.md`,
  );
}

/** The live approvals and questions waiting for the user, each answered through the session's actions. */
function PromptCards(props: {
  snapshot: EdgeAgentResult | null | undefined;
  base: RequestBase;
  busy: boolean;
  onAct: (run: () => Promise<EdgeAgentResult>) => void;
}) {
  const { snapshot, base, busy, onAct } = props;
  return (
    <>
      {snapshot?.approvals?.map((approval) => (
        <ApprovalCard
          key={approval.id}
          approval={approval}
          disabled={busy}
          onDecide={(decision) =>
            onAct(() => agent({ ...base, action: 'approve', approval_id: approval.id, decision }))
          }
        />
      ))}
      {snapshot?.input_requests?.map((request) => (
        <InputCard
          key={request.id}
          request={request}
          disabled={busy}
          onAnswer={(answers) =>
            onAct(() => agent({ ...base, action: 'answer', input_id: request.id, answers }))
          }
        />
      ))}
    </>
  );
}
