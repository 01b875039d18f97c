import { Limits, result, type EdgeAgentResult, type SessionSummary } from '#contracts';

/** `history_page` as sent (a decimal string); anything unusable means the first page. */
export function historyPage(raw: string | undefined): number {
  const page = Number(raw ?? '1');
  return Number.isSafeInteger(page) && page >= 1 && page <= Limits.HISTORY_PAGE_MAX ? page : 1;
}

/**
 * The sessions list of a saved access (reference §2.3 "sessions" with history): stored rows are
 * the list, each closed unless the edge says otherwise; live state is laid over matching rows;
 * live sessions history has not stored yet are appended to the first page.
 */
export function mergeSessions(
  live: EdgeAgentResult,
  stored: { sessions: SessionSummary[]; total: number },
  page: number,
): EdgeAgentResult {
  const liveSessions = live.status === 'ok' ? (live.sessions ?? []) : [];
  const liveById = new Map(liveSessions.map((session) => [session.session_id, session]));
  const sessions: SessionSummary[] = stored.sessions.map((row) => {
    const current = liveById.get(row.session_id);
    const base: SessionSummary = { ...row, running: false, closed: true, status: 'session_closed' };
    // A stored title wins over the live one: it carries the title override (reference §2.3 rename).
    return current ? { ...base, ...current, ...(row.title ? { title: row.title } : {}) } : base;
  });
  if (page === 1) {
    const listed = new Set(stored.sessions.map((row) => row.session_id));
    for (const session of liveSessions) if (!listed.has(session.session_id)) sessions.push(session);
  }
  const {
    status: _status,
    version: _version,
    sessions: _sessions,
    ...liveFields
  } = live.status === 'ok' ? live : result('ok');
  return result('ok', {
    ...liveFields,
    sessions,
    sessions_available: true,
    history_total: stored.total,
    history_persistent: true,
  });
}
