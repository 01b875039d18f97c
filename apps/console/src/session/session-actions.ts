// What a session page does: its actions (one at a time, each refreshing the live state) and the
// conversation's rounds as far back as the reader has asked for.
import { useState } from 'preact/hooks';
import type { AgentFile, EdgeAgentResult } from '../../../../libs/contracts/src/edge-agent.js';
import { agent, expectOk, newTraceparent } from '../api.js';
import type { TurnNote } from './entries.js';
import type { JournalClient, SessionScope } from './journal.js';
import type { LiveState } from './live.js';
import { INITIAL_ARCHIVED_ROUNDS, MORE_ROUNDS, toRounds } from './rounds.js';

export type RequestBase = { edge_id: string; access_id: string; session_id: string };

/** The session's actions: `act` runs one, `send` a prompt with the attachments staged for it. */
export function useSessionActions(
  scope: SessionScope,
  live: LiveState,
  note: (window: number, patch: TurnNote) => void,
) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [attachments, setAttachments] = useState<AgentFile[]>([]);
  const base: RequestBase = { edge_id: scope.edgeId, access_id: scope.accessId, session_id: scope.sessionId };
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
  return { base, error, setError, busy, attachments, setAttachments, act, send };
}

/** The rounds shown (the live one and the archived ones asked for), and how to ask for older. */
export function useRounds(j: JournalClient, liveWindow: number, setError: (error: string | null) => void) {
  const [shownArchived, setShownArchived] = useState(INITIAL_ARCHIVED_ROUNDS);
  const [toTop, setToTop] = useState(0);
  const rounds = toRounds(j.items.values());
  const window = Math.max(liveWindow, rounds.at(-1)?.window ?? 0);
  const visible = rounds.slice(-(shownArchived + 1));
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
  return { rounds, window, visible, hiddenOlder: rounds.length - visible.length, toTop, showOlder };
}
