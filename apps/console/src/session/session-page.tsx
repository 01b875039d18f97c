import { useEffect, useMemo, useReducer, useRef, useState } from 'preact/hooks';
import type { AgentFile, EdgeAgentResult } from '../../../../libs/contracts/src/edge-agent.js';
import { agent, expectOk, newTraceparent, STATUS_TEXT } from '../api.js';
import { useConnectors } from '../hooks.js';
import { NotFoundPage } from '../pages/not-found.js';
import { Composer } from './composer.js';
import { EntryView, RoundHeader, type TurnNote } from './entries.js';
import { FileBrowser } from './files.js';
import { JournalClient, type SessionScope, type StreamState } from './journal.js';
import { LiveState } from './live.js';
import { ApprovalCard, InputCard } from './prompts.js';
import { INITIAL_ARCHIVED_ROUNDS, MORE_ROUNDS, toRounds, transcript } from './rounds.js';
import { VirtualList, type Row } from './virtual-list.js';

const STREAM_TEXT: Record<StreamState, string> = {
  connecting: 'Connecting…',
  live: 'Live · caught up',
  reconnecting: 'Reconnecting…',
  ended: 'This session was deleted.',
  'not-found': 'Not found',
};

function useTurnNotes(sessionId: string) {
  const key = `tether.turns.${sessionId}`;
  const [notes, setNotes] = useState<Record<number, TurnNote>>(() => {
    try {
      return JSON.parse(sessionStorage.getItem(key) ?? '{}') as Record<number, TurnNote>;
    } catch {
      return {};
    }
  });
  const note = (window: number, patch: TurnNote) =>
    setNotes((old) => {
      const next = { ...old, [window]: { ...old[window], ...patch } };
      sessionStorage.setItem(key, JSON.stringify(next));
      return next;
    });
  return [notes, note] as const;
}

export function SessionPage(props: SessionScope & { traceTemplate: string | null }) {
  const scope = useMemo(
    () => ({ edgeId: props.edgeId, accessId: props.accessId, sessionId: props.sessionId }),
    [props.edgeId, props.accessId, props.sessionId],
  );
  const [, bump] = useReducer((n: number, _: void) => n + 1, 0);
  const render = () => bump();
  const journal = useRef<JournalClient | null>(null);
  const live = useRef<LiveState | null>(null);
  journal.current ??= new JournalClient(scope, render);
  live.current ??= new LiveState(scope, render);
  useEffect(() => {
    journal.current!.start();
    live.current!.start();
    return () => {
      journal.current!.stop();
      live.current!.stop();
    };
  }, [scope]);
  const connectors = useConnectors();
  const [notes, note] = useTurnNotes(scope.sessionId);
  const [shownArchived, setShownArchived] = useState(INITIAL_ARCHIVED_ROUNDS);
  const [toTop, setToTop] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [attachments, setAttachments] = useState<AgentFile[]>([]);

  const j = journal.current;
  const snapshot = live.current.snapshot;
  const window = snapshot?.window ?? 0;
  const timing = snapshot?.turn_timing;
  useEffect(() => {
    if (snapshot && timing && snapshot.history_windowing !== undefined) note(window, { ...timing });
    // Deliberate dependency list: re-run only when these inputs change.
  }, [window, timing?.dispatch_ms, timing?.first_reply_ms, timing?.finished_ms]);

  if (j.state === 'not-found' || live.current.notFound) return <NotFoundPage what="session" />;

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
      live.current!.adopt(expectOk(await run()));
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
      live.current!.refresh();
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
  const rows: Row[] = [];
  for (const round of visible) {
    rows.push({
      key: `r:${round.window}`,
      render: () => (
        <RoundHeader
          window={round.window}
          live={round.window === liveWindow}
          note={notes[round.window]}
          traceTemplate={props.traceTemplate}
        />
      ),
    });
    for (const entry of round.entries)
      rows.push({ key: entry.item.itemId, render: () => <EntryView entry={entry} /> });
  }

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
  const downloadTranscript = () => {
    const url = URL.createObjectURL(
      new Blob([transcript(rounds, snapshot?.title || 'Conversation')], { type: 'text/markdown' }),
    );
    const link = document.createElement('a');
    link.href = url;
    link.download = `transcript-${scope.sessionId}.md`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };

  return (
    <div class="session">
      <div class="convo">
        <header class="session-head">
          <h1>{snapshot?.title || 'New conversation'}</h1>
          <p class="state-line">
            <span class={`stream ${j.state}`} role="status" data-resumed-from={j.resumedFrom ?? ''}>
              {STREAM_TEXT[j.state]}
            </span>
            <span class="agent-state">
              {snapshot?.running ? 'Agent working' : closed ? 'Closed' : 'Idle'}
              {snapshot?.status && snapshot.status !== 'ok'
                ? ` · ${STATUS_TEXT[snapshot.status] ?? snapshot.status}`
                : ''}
            </span>
          </p>
          <div class="row">
            <button
              type="button"
              disabled={hiddenOlder === 0 && !j.hasOlder}
              onClick={() => void showOlder()}
            >
              Show {MORE_ROUNDS} older rounds
            </button>
            <button type="button" onClick={downloadTranscript}>
              Download transcript
            </button>
          </div>
        </header>
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
