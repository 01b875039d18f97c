import type { ServerResponse } from 'node:http';
import { Logger } from '@nestjs/common';
import {
  Limits,
  type HistoryJournalPageReply,
  type JournalCursor,
  type JournalNotice,
  type JournalPage,
  type JournalResetReason,
  type JournalSnapshot,
  type Subjects,
} from '#contracts';
import { RpcRemoteError } from '#messaging';
import { recordSseBatch } from '#telemetry';
import type { Principal } from '../auth/principal.js';
import type { SseConfig } from '../config.js';
import { isUnreachable } from '../common/service-client.js';
import { noteSseStream } from '../common/telemetry.js';
import { formatCursor, type SessionScope, type SessionsService } from './sessions.service.js';
import { UNPARSED, type SharedMessage, type SharedSubscriptions } from './shared-subscriptions.js';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null;

/**
 * Bytes a stream may have buffered on a socket that is not draining. Past it the client is too
 * slow to follow: it gets a `reset` and the stream closes (it resumes later from its cursor).
 * Below it the stream keeps reading pages for the client, so memory per stream stays bounded by
 * this plus one page and the reset.
 */
export const SSE_MAX_BUFFERED_BYTES = 4 * Limits.JOURNAL_PAGE_MAX_BYTES;
/**
 * The ownership fence the Orca journal's `snapshot` and `reset` events carry (reference orca
 * §2.2): there is no fenced mutation yet (issue 4 step 4), so it is 0.
 */
const NO_FENCE = 0;

/**
 * One SSE subscriber of one session's journal. It keeps its own cursor. When history's commit
 * notice carries the page that starts at that cursor, it sends that page; otherwise it reads its
 * own `after` pages from history whenever a notice says the head moved. A slow subscriber only
 * delays itself: it never holds anything the writer or another stream waits on. Batches carry
 * current item state, so re-reading a page (a duplicate notice, a resume) converges.
 */
export class JournalEventStream {
  private readonly log = new Logger(JournalEventStream.name);
  private cursor: JournalCursor | undefined;
  /** Releases this stream's listeners on the shared subscriptions. */
  private releases: (() => void)[] = [];
  private timers: NodeJS.Timeout[] = [];
  private pumping = false;
  private dirty = false;
  private closed = false;
  /** Over the buffer bound: only the reset is still written, then the stream closes. */
  private overflowing = false;
  /** The first read, made before the response was committed (so an unknown session is a 404). */
  private first: HistoryJournalPageReply | undefined;

  constructor(
    private readonly sessions: SessionsService,
    private readonly feeds: SharedSubscriptions,
    private readonly subjects: Subjects,
    private readonly principal: Principal,
    private readonly scope: SessionScope,
    private readonly raw: ServerResponse,
    /** The heartbeat and re-check intervals (validated api config). */
    private readonly timing: SseConfig,
  ) {}

  /**
   * Starts the stream; the caller has authorized it, made the first `after` read from `cursor`
   * and hijacked the response.
   */
  open(cursor: JournalCursor | undefined, first: HistoryJournalPageReply): void {
    noteSseStream(1);
    this.cursor = cursor;
    this.first = first;
    this.raw.on('close', () => this.close());
    this.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    const { sessionId } = this.scope;
    this.releases.push(
      this.feeds.listen(this.subjects.sessionJournalNotice(sessionId), (message) => this.onNotice(message)),
      // The router's `session.deleted` (docs/events.md) ends the stream at once, not only at the
      // next re-check. Core NATS sees the JetStream publish too; nothing is consumed or stored.
      this.feeds.listen(this.subjects.sessionLifecycle(sessionId), (message) => {
        if (isObject(message) && message['type'] === 'session.deleted') this.end();
      }),
    );
    this.timers.push(
      setInterval(() => this.write(': heartbeat\n\n'), this.timing.heartbeatMs),
      setInterval(() => void this.reauthorize(), this.timing.reauthorizeMs),
    );
    this.wake();
  }

  /** A commit notice (shared with the other streams of the session: read, never changed). */
  private onNotice(message: SharedMessage): void {
    // A notice that does not parse, or whose page is not one, still means "something changed".
    if (message !== UNPARSED && isObject(message)) {
      const notice = message as Partial<JournalNotice>;
      try {
        // The commit's own page, for a stream standing where it starts: no read.
        if (this.applyCommitted(notice)) return;
      } catch {
        // Not a page this stream can use: it reads instead.
      }
      // Already at or past this head in the same epoch: nothing to read.
      const cursor = this.cursor;
      if (
        cursor &&
        notice.epoch === cursor.epoch &&
        typeof notice.head === 'number' &&
        notice.head <= cursor.sequence
      ) {
        return;
      }
    }
    this.wake();
  }

  /** Reads pages from the cursor until the head; one read at a time, re-run when woken meanwhile. */
  private wake(): void {
    if (this.closed) return;
    if (this.pumping) {
      this.dirty = true;
      return;
    }
    this.pumping = true;
    void this.pump().finally(() => {
      this.pumping = false;
      if (this.dirty && !this.closed) {
        this.dirty = false;
        this.wake();
      }
    });
  }

  private async pump(): Promise<void> {
    try {
      for (;;) {
        if (this.closed || this.overflowing) return;
        if (!this.cursor) {
          // An `after` read without a position answers with the bounded snapshot and the head.
          const reply = await this.read(undefined);
          if (!reply || reply.ok) return;
          this.emitSnapshot('snapshot', reply.snapshot);
          continue;
        }
        const reply = await this.read(this.cursor);
        if (!reply) return;
        if (!reply.ok) {
          this.emitSnapshot('reset', reply.snapshot, reply.reset);
          continue;
        }
        this.emitPage(this.cursor, reply.page, 'read');
        if (!reply.page.hasNewer) return;
      }
    } catch (error) {
      if (isUnreachable(error)) {
        // History is down or swamped: the stream stays, and the next notice or re-check reads
        // again from the same cursor. Its grant is still checked (and may stand in) meanwhile.
        this.log.debug(`Journal stream of session ${this.scope.sessionId} waits for history.`);
        return;
      }
      this.log.warn(`Journal stream of session ${this.scope.sessionId} failed: ${(error as Error).message}`);
      this.close();
    }
  }

  /** An `after` page read (or committed) from `cursor`, as one `batch` when it moves anything. */
  private emitPage(cursor: JournalCursor, page: JournalPage, source: 'committed' | 'read'): void {
    if (
      page.items.length > 0 ||
      page.removedItemIds.length > 0 ||
      page.window.nextCursor.sequence > cursor.sequence
    ) {
      const batch = {
        cursor: page.window.nextCursor,
        items: page.items,
        removedItemIds: page.removedItemIds,
        submissions: page.submissions,
      };
      this.cursor = page.window.nextCursor;
      this.event('batch', { type: 'batch', sessionId: this.scope.sessionId, batch }, this.cursor);
      recordSseBatch(source);
    }
  }

  /**
   * Applies the page a commit notice carries when it is this stream's next page: the stream
   * stands exactly where the page starts (same epoch and sequence), no read of its own is under
   * way (that read's answer moves the cursor first), and the page is this owner's, access's and
   * edge's (an edge picks its session ids, so the id alone proves nothing). False otherwise: the
   * notice is then a plain wake-up.
   */
  private applyCommitted(notice: Partial<JournalNotice>): boolean {
    const committed = notice.committed;
    const cursor = this.cursor;
    if (!committed || !cursor || this.pumping || this.closed || this.overflowing) return false;
    const { principal, scope } = this;
    if (
      committed.actor_id !== principal.actorId ||
      committed.access_id !== scope.accessId ||
      committed.edge_id !== scope.edgeId ||
      notice.epoch !== cursor.epoch ||
      committed.from !== cursor.sequence ||
      committed.page.epoch !== cursor.epoch ||
      committed.page.window.nextCursor.epoch !== cursor.epoch
    ) {
      return false;
    }
    this.emitPage(cursor, committed.page, 'committed');
    return true;
  }

  /** One `after` page; null when the stream ended (session gone). */
  private async read(cursor: JournalCursor | undefined): Promise<HistoryJournalPageReply | null> {
    const first = this.first;
    this.first = undefined;
    if (first) return first;
    try {
      return await this.sessions.page(this.principal, this.scope, {
        direction: 'after',
        ...(cursor ? { cursor } : {}),
        limit: Limits.JOURNAL_PAGE_MAX_LIMIT,
      });
    } catch (error) {
      if (error instanceof RpcRemoteError && error.code === 'not_found') {
        this.end();
        return null;
      }
      throw error;
    }
  }

  private emitSnapshot(
    type: 'snapshot' | 'reset',
    snapshot: JournalSnapshot,
    reset?: JournalResetReason,
  ): void {
    this.cursor = snapshot.cursor;
    const data =
      type === 'snapshot'
        ? { type, sessionId: this.scope.sessionId, snapshot, fence: NO_FENCE }
        : { type, sessionId: this.scope.sessionId, reset, snapshot, fence: NO_FENCE };
    this.event(type, data, snapshot.cursor);
  }

  private event(type: string, data: unknown, id: JournalCursor): void {
    this.write(`id: ${formatCursor(id)}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
    if (!this.overflowing && this.raw.writableLength > SSE_MAX_BUFFERED_BYTES) {
      this.overflowing = true;
      void this.overflow();
    }
  }

  /** A client that stopped reading: tell it to reload (if it ever reads again) and let it go. */
  private async overflow(): Promise<void> {
    if (this.closed) return;
    const reply = await this.read(undefined).catch(() => null);
    if (reply && !reply.ok && !this.closed) {
      this.raw.write(
        `id: ${formatCursor(reply.snapshot.cursor)}\nevent: reset\ndata: ${JSON.stringify({
          type: 'reset',
          sessionId: this.scope.sessionId,
          reset: 'cursor_ahead',
          snapshot: reply.snapshot,
          fence: NO_FENCE,
        })}\n\n`,
      );
    }
    this.close();
  }

  private async reauthorize(): Promise<void> {
    try {
      await this.sessions.authorize(this.principal, this.scope, { standIn: true });
      // A deleted session has no journal any more: the read answers not found and ends the stream.
      this.wake();
    } catch (error) {
      this.log.debug(`Journal stream of session ${this.scope.sessionId} closed: ${(error as Error).message}`);
      this.close();
    }
  }

  /** The session is gone: `end`, then close. */
  private end(): void {
    this.write(`event: end\ndata: ${JSON.stringify({ type: 'end' })}\n\n`);
    this.close();
  }

  private write(chunk: string): void {
    if (!this.closed && !this.overflowing) this.raw.write(chunk);
  }

  /** Idempotent: stop timers and the subscriptions, end the response, count it once. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    for (const release of this.releases) release();
    this.releases = [];
    if (!this.raw.writableEnded) this.raw.end();
    noteSseStream(-1);
  }
}
