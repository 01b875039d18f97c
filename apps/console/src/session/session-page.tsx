import { useEffect, useMemo, useState } from 'preact/hooks';
import type { AgentFile, EdgeAgentResult } from '../../../../libs/contracts/src/edge-agent.js';
import { agent, expectOk, newTraceparent } from '../api.js';
import { useConnectors } from '../hooks.js';
import { NotFoundPage } from '../pages/not-found.js';
import { Composer } from './composer.js';
import { FileBrowser } from './files.js';
import type { SessionScope } from './journal.js';
import { ApprovalCard, InputCard } from './prompts.js';
import { INITIAL_ARCHIVED_ROUNDS, MORE_ROUNDS, toRounds, transcript } from './rounds.js';
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
  const [shownArchived, setShownArchived] = useState(INITIAL_ARCHIVED_ROUNDS);
  const [toTop, setToTop] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [attachments, setAttachments] = useState<AgentFile[]>([]);

  const snapshot = live.snapshot;
  const window = snapshot?.window ?? 0;
  const timing = snapshot?.turn_timing;
  useEffect(() => {
    if (snapshot && timing && snapshot.history_windowing !== undefined) note(window, { ...timing });
    // Deliberate dependency list: re-run only when these inputs change.
  }, [window, timing?.dispatch_ms, timing?.first_reply_ms, timing?.finished_ms]);

  if (j.state === 'not-found' || live.notFound) return <NotFoundPage what="session" />;

  const edge = connectors.data?.find((c) => c.id === scope.edgeId);
  const offline = (edge && !edge.online) || snapshot?.archived;
  const disabledReason = offline
    ? `The edge "${edge?.name ?? scope.edgeId}" is offline: this session is read-only from its history until the edge is back.`
    : j.state === 'ended'
      ? 'This session was deleted.'
      : null;
  const closed = snapshot?.closed ?? false;

  const base = { edge_id: scope.edgeId, access_id: scope.accessId, session_id: scope.sessionId };
  const act = async (run: () => Promise<EdgeAgentResult>) => {
    setBusy(true);
    setError(null);
    try {
      live.adopt(expectOk(await run()));
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
      live.refresh();
    }
  };
  const send = (text: string) =>
    act(async () => {
      const trace = newTraceparent();
      const result = await agent(
        {
          ...base,
          action: 'send',
          ...(text ? { text } : {}),
          ...(attachments.length ? { attachments: attachments.map((a) => a.path ?? '') } : {}),
        },
        { traceparent: trace.header },
      );
      if (result.status === 'ok') {
        note(result.window ?? 0, {
          traceId: trace.traceId,
          request_service_ms: result.request_service_ms ?? null,
        });
        setAttachments([]);
      }
      return result;
    });

  const rounds = toRounds(j.items.values());
  const liveWindow = Math.max(window, rounds.at(-1)?.window ?? 0);
  const visible = rounds.slice(-(shownArchived + 1));
  const hiddenOlder = rounds.length - visible.length;
  const rows = conversationRows(visible, liveWindow, notes, props.traceTemplate);

  const showOlder = async () => {
    setError(null);
    try {
      // Read older pages until 20 more rounds are held or nothing older is left.
      while (toRounds(j.items.values()).length < visible.length + MORE_ROUNDS && (await j.loadOlder()));
    } catch (e) {
      setError((e as Error).message);
    }
    setShownArchived((n) => n + MORE_ROUNDS);
    setToTop((n) => n + 1);
  };
  const downloadTranscript = () =>
    saveBlob(
      new Blob([transcript(rounds, snapshot?.title || 'Conversation')], { type: 'text/markdown' }),
      `transcript-${scope.sessionId}.md`,
    );

  return (
    <div class="session">
      <div class="convo">
        <SessionHeader
          title={snapshot?.title || 'New conversation'}
          stream={j.state}
          resumedFrom={j.resumedFrom}
          snapshot={snapshot}
          canShowOlder={hiddenOlder > 0 || j.hasOlder}
          onShowOlder={() => void showOlder()}
          onTranscript={downloadTranscript}
        />
        <VirtualList rows={rows} label="Conversation" scrollToTop={toTop} />
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
        {!offline &&
          snapshot?.approvals?.map((approval) => (
            <ApprovalCard
              key={approval.id}
              approval={approval}
              disabled={busy}
              onDecide={(decision) =>
                void act(() => agent({ ...base, action: 'approve', approval_id: approval.id, decision }))
              }
            />
          ))}
        {!offline &&
          snapshot?.input_requests?.map((request) => (
            <InputCard
              key={request.id}
              request={request}
              disabled={busy}
              onAnswer={(answers) =>
                void act(() => agent({ ...base, action: 'answer', input_id: request.id, answers }))
              }
            />
          ))}
        <Composer
          snapshot={snapshot}
          base={base}
          busy={busy}
          disabledReason={disabledReason ?? (closed ? 'The session is closed: resume it to continue.' : null)}
          attachments={attachments}
          onRemoveAttachment={(path) => setAttachments(attachments.filter((a) => a.path !== path))}
          onSend={(text) => void send(text)}
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
