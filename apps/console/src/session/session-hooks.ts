import { useEffect, useReducer, useRef, useState } from 'preact/hooks';
import type { TurnNote } from './entries.js';
import { JournalClient, type SessionScope } from './journal.js';
import { LiveState } from './live.js';

/** The session's journal stream and live state, started with the page and stopped with it. */
export function useSessionClients(scope: SessionScope): { journal: JournalClient; live: LiveState } {
  const [, bump] = useReducer((n: number, _: void) => n + 1, 0);
  const clients = useRef<{ journal: JournalClient; live: LiveState } | null>(null);
  clients.current ??= {
    journal: new JournalClient(scope, () => bump()),
    live: new LiveState(scope, () => bump()),
  };
  useEffect(() => {
    const { journal, live } = clients.current!;
    journal.start();
    live.start();
    return () => {
      journal.stop();
      live.stop();
    };
  }, [scope]);
  return clients.current;
}

/** Timing and trace id per round, kept for the tab (the journal does not carry them). */
export function useTurnNotes(sessionId: string) {
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
