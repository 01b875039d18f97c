// The session's conversation, live from the journal's Server-Sent Events (docs/contract.md "Live
// events"): items by id at their newest revision, the cursor of the last event applied, and a
// reconnect loop that resumes from that cursor (Last-Event-ID) after a reload or a dropped
// connection. EventSource cannot send the bearer token, so the stream is read with fetch.
import type { HistoryJournalPageReply, JournalItem } from '../../../../libs/contracts/src/internal.js';
import { apiUrl, authHeaders } from '../api.js';
import { signOut } from '../auth.js';

export type StreamState = 'connecting' | 'live' | 'reconnecting' | 'ended' | 'not-found';

interface Stored {
  cursor: string | null;
  hasOlder: boolean;
  items: JournalItem[];
}

/** Reconnect backoff: quick at first, never hammering an api that is down. */
const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 5_000;
/** Beyond this the tab keeps only the cursor-less view: sessionStorage holds about 5 MB. */
const STORE_MAX_CHARS = 2_000_000;
const STORE_DELAY_MS = 250;
/** 404s in a row before the session counts as not found (a new one reaches history shortly). */
const NOT_FOUND_ATTEMPTS = 6;
/** Journal pages carry at most 200 items (docs/contract.md "Pages"). */
const PAGE_LIMIT = 200;

export interface SessionScope {
  edgeId: string;
  accessId: string;
  sessionId: string;
}

export class JournalClient {
  items = new Map<string, JournalItem>();
  cursor: string | null = null;
  hasOlder = false;
  state: StreamState = 'connecting';
  /** The cursor the last connection resumed from (shown, and checked by the tests). */
  resumedFrom: string | null = null;
  private abort?: AbortController;
  private retryMs = RETRY_MIN_MS;
  private retryTimer?: ReturnType<typeof setTimeout>;
  private storeTimer?: ReturnType<typeof setTimeout>;
  private stopped = false;
  private notFoundCount = 0;
  private readonly storageKey: string;

  constructor(
    private readonly scope: SessionScope,
    private readonly onChange: () => void,
  ) {
    this.storageKey = `tether.journal.${scope.edgeId}.${scope.accessId}.${scope.sessionId}`;
    this.restore();
  }

  private get query(): string {
    return `edge_id=${encodeURIComponent(this.scope.edgeId)}&access_id=${encodeURIComponent(this.scope.accessId)}`;
  }

  private readonly onPageHide = () => this.persist();

  start(): void {
    addEventListener('pagehide', this.onPageHide);
    void this.connect();
  }

  stop(): void {
    removeEventListener('pagehide', this.onPageHide);
    this.stopped = true;
    this.abort?.abort();
    clearTimeout(this.retryTimer);
    this.persist();
  }

  private setState(state: StreamState): void {
    if (this.state === state) return;
    this.state = state;
    this.onChange();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    this.abort = new AbortController();
    const headers: Record<string, string> = { ...authHeaders(), accept: 'text/event-stream' };
    if (this.cursor) headers['last-event-id'] = this.cursor;
    this.resumedFrom = this.cursor;
    try {
      const response = await fetch(apiUrl(`api/v1/sessions/${this.scope.sessionId}/events?${this.query}`), {
        headers,
        signal: this.abort.signal,
        cache: 'no-store',
      });
      if (response.status === 404) {
        // A session started a moment ago may not be in the journal yet: only a lasting 404 counts.
        if (++this.notFoundCount >= NOT_FOUND_ATTEMPTS) return this.setState('not-found');
        throw new Error('not in the journal yet');
      }
      this.notFoundCount = 0;
      if (response.status === 401) return signOut('Your sign-in has expired; sign in again.');
      if (response.status === 400 && this.cursor) {
        // A cursor this api cannot read: start over from the snapshot.
        this.cursor = null;
        throw new Error('bad cursor');
      }
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
      this.retryMs = RETRY_MIN_MS;
      this.setState('live');
      await this.read(response.body);
    } catch {
      // Aborted, refused or cut: retried below unless stopped.
    }
    if (this.stopped || this.state === 'ended' || this.state === 'not-found') return;
    this.setState('reconnecting');
    this.retryTimer = setTimeout(() => void this.connect(), this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        this.dispatch(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
      }
    }
  }

  /** One complete event block: applied whole or not at all, as EventSource does. */
  private dispatch(block: string): void {
    let type = 'message';
    let id: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') type = value;
      else if (field === 'id') id = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length === 0) return;
    const event = JSON.parse(data.join('\n')) as {
      snapshot?: { items: JournalItem[]; hasOlder: boolean };
      batch?: { items: JournalItem[]; removedItemIds: string[] };
    };
    if ((type === 'snapshot' || type === 'reset') && event.snapshot) {
      this.items = new Map(event.snapshot.items.map((item) => [item.itemId, item]));
      this.hasOlder = event.snapshot.hasOlder;
    } else if (type === 'batch' && event.batch) {
      this.merge(event.batch.items);
      for (const removed of event.batch.removedItemIds) this.items.delete(removed);
    } else if (type === 'end') {
      this.setState('ended');
    }
    if (id) this.cursor = id;
    this.schedulePersist();
    this.onChange();
  }

  private merge(items: JournalItem[]): void {
    for (const item of items) {
      const held = this.items.get(item.itemId);
      if (!held || held.revision <= item.revision) this.items.set(item.itemId, item);
    }
  }

  /** Reads older items (`before` the oldest held); false when there is nothing older. */
  async loadOlder(): Promise<boolean> {
    if (!this.hasOlder || !this.cursor) return false;
    const epoch = this.cursor.slice(0, this.cursor.lastIndexOf(':'));
    const oldest = Math.min(...[...this.items.values()].map((item) => item.sequence));
    const params = `${this.query}&direction=before&limit=${PAGE_LIMIT}&cursor=${encodeURIComponent(`${epoch}:${oldest}`)}`;
    const response = await fetch(apiUrl(`api/v1/sessions/${this.scope.sessionId}/history?${params}`), {
      headers: authHeaders(),
    });
    if (!response.ok) throw new Error('Older rounds cannot be read right now.');
    const reply = ((await response.json()) as { data: HistoryJournalPageReply }).data;
    if (!reply.ok) {
      this.hasOlder = false;
      return false;
    }
    // Older items never replace newer state the stream already applied.
    for (const item of reply.page.items) if (!this.items.has(item.itemId)) this.items.set(item.itemId, item);
    this.hasOlder = reply.page.hasOlder;
    this.schedulePersist();
    this.onChange();
    return reply.page.items.length > 0;
  }

  private restore(): void {
    try {
      const raw = sessionStorage.getItem(this.storageKey);
      if (!raw) return;
      const stored = JSON.parse(raw) as Stored;
      this.items = new Map(stored.items.map((item) => [item.itemId, item]));
      this.cursor = stored.cursor;
      this.hasOlder = stored.hasOlder;
    } catch {
      sessionStorage.removeItem(this.storageKey);
    }
  }

  private schedulePersist(): void {
    clearTimeout(this.storeTimer);
    this.storeTimer = setTimeout(() => this.persist(), STORE_DELAY_MS);
  }

  /** Items and cursor together, so a reload resumes exactly where this view stands. */
  private persist(): void {
    clearTimeout(this.storeTimer);
    const stored: Stored = { cursor: this.cursor, hasOlder: this.hasOlder, items: [...this.items.values()] };
    const text = JSON.stringify(stored);
    try {
      if (text.length > STORE_MAX_CHARS) sessionStorage.removeItem(this.storageKey);
      else sessionStorage.setItem(this.storageKey, text);
    } catch {
      // Storage full or refused: a reload then starts from the snapshot, which is still correct.
      sessionStorage.removeItem(this.storageKey);
    }
  }
}
