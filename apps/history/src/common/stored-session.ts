// What history stores of a snapshot and the views it builds back from it. Pure functions: the
// repositories store and read ciphertext, the services encrypt and decrypt around these.
import {
  result,
  withoutLiveOnlyFields,
  type EdgeAgentResult,
  type Message,
  type ResumeState,
} from '#contracts';

export function storedSnapshot(snapshot: EdgeAgentResult): Record<string, unknown> {
  return { ...withoutLiveOnlyFields(snapshot) };
}

/** The small encrypted value the sessions list reads instead of whole payloads. */
export interface SessionSummaryValue {
  title?: string;
  thread_id?: string;
  project?: string;
}

export function sessionSummary(snapshot: EdgeAgentResult): SessionSummaryValue {
  const summary: SessionSummaryValue = {};
  if (snapshot.title) summary.title = snapshot.title;
  if (snapshot.thread_id) summary.thread_id = snapshot.thread_id;
  if (snapshot.project) summary.project = snapshot.project;
  return summary;
}

/**
 * The read-only view of a stored session (reference §4 "Offline behavior", §2.3 rename): the
 * stored snapshot, `ok`, archived and closed, not running, the title override on top.
 */
export function archivedView(stored: EdgeAgentResult, titleOverride: string | null): EdgeAgentResult {
  const { version: _version, status: _status, ...fields } = withoutLiveOnlyFields(stored);
  return result('ok', {
    ...fields,
    ...(titleOverride !== null ? { title: titleOverride } : {}),
    archived: true,
    closed: true,
    running: false,
    history_persistent: true,
  });
}

/** Only these roles may seed a resumed session (reference §2.3 resume, edge seed checks). */
const SEED_ROLES = new Set(['user', 'assistant']);

/** The display state a resume restores; never the native thread id (reference §2.3 resume). */
export function resumeSeed(stored: EdgeAgentResult, titleOverride: string | null): ResumeState {
  const seed: ResumeState = {
    session_id: stored.session_id ?? '',
    revision: stored.revision ?? 0,
  };
  const messages = (stored.messages ?? []).filter((message: Message) => SEED_ROLES.has(message.role));
  if (messages.length > 0) seed.messages = messages;
  if (stored.activities && stored.activities.length > 0) seed.activities = stored.activities;
  const title = titleOverride ?? stored.title;
  if (title) seed.title = title;
  if (stored.model) seed.model = stored.model;
  if (stored.started_at) seed.started_at = stored.started_at;
  if (stored.window) seed.window = stored.window;
  if (stored.truncated) seed.truncated = true;
  return seed;
}

/** One archived round as stored: what a transcript page shows. */
export interface StoredPage {
  session_id: string;
  revision: number;
  window: number;
  title?: string;
  messages?: EdgeAgentResult['messages'];
  activities?: EdgeAgentResult['activities'];
  truncated?: boolean;
}

export function pageOf(snapshot: EdgeAgentResult): StoredPage {
  const page: StoredPage = {
    session_id: snapshot.session_id ?? '',
    revision: snapshot.revision ?? 0,
    window: snapshot.window ?? 0,
  };
  if (snapshot.title) page.title = snapshot.title;
  if (snapshot.messages && snapshot.messages.length > 0) page.messages = snapshot.messages;
  if (snapshot.activities && snapshot.activities.length > 0) page.activities = snapshot.activities;
  if (snapshot.truncated) page.truncated = true;
  return page;
}

/** A transcript page (reference §2.3 transcript): an archived, closed result of one round. */
export function transcriptPage(page: StoredPage): EdgeAgentResult {
  return result('ok', {
    session_id: page.session_id,
    revision: page.revision,
    window: page.window,
    ...(page.title ? { title: page.title } : {}),
    ...(page.messages ? { messages: page.messages } : {}),
    ...(page.activities ? { activities: page.activities } : {}),
    ...(page.truncated ? { truncated: true } : {}),
    archived: true,
    closed: true,
    running: false,
    history_persistent: true,
    history_windowing: true,
  });
}
