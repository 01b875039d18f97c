import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { AgentConnector } from '../../../libs/contracts/src/edge-agent.js';
import type { AccessListReply } from '../../../libs/contracts/src/internal.js';
import { call } from './api.js';

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

/** Loads `load()` now, again on `reload()`, and every `refreshMs` when given. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], refreshMs?: number): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error: string | null; loading: boolean }>({
    error: null,
    loading: true,
  });
  const [tick, setTick] = useState(0);
  const live = useRef(true);
  useEffect(() => {
    live.current = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = () => {
      load().then(
        (data) => live.current && setState({ data, error: null, loading: false }),
        (error: Error) =>
          live.current && setState((old) => ({ ...old, error: error.message, loading: false })),
      );
      if (refreshMs) timer = setTimeout(run, refreshMs);
    };
    run();
    return () => {
      live.current = false;
      clearTimeout(timer);
    };
    // Deliberate dependency list: re-run only when these inputs change.
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((value) => value + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** Presence is refreshed every 5 s, as the reference UI refreshes status. */
export const PRESENCE_REFRESH_MS = 5_000;

export function useConnectors(refresh = true): Loaded<AgentConnector[]> {
  return useLoad(
    () => call<AgentConnector[]>('GET', 'api/v1/edge-agents/connectors'),
    [],
    refresh ? PRESENCE_REFRESH_MS : undefined,
  );
}

export function useAccesses(page = 1, pageSize = 100): Loaded<AccessListReply> {
  return useLoad(
    () => call<AccessListReply>('GET', `api/v1/agent-accesses?page=${page}&page_size=${pageSize}`),
    [page, pageSize],
  );
}

/** One user action at a time: `busy` while it runs, its failure as `error`. */
export function useAction() {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (action: () => Promise<unknown>) => {
    setError(null);
    setBusy(true);
    try {
      await action();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return { error, setError, busy, run };
}
