// A session's journal as the router writes it, step by step: edge updates and submission rows
// with their sequences, epochs and revisions, for suites that feed history's write path directly
// (JournalService) or through the stream (HistoryHarness).
import type { EdgeAgentResult, JournalMessage, Submission } from '#contracts';
import { sessionId, submissionRow, updateRow, type HistoryHarness } from './history.js';

export { HARNESS_TIMEOUT_MS, SLOW_TEST_TIMEOUT_MS, startHarness, type HistoryHarness } from './history.js';

/** One step of a scripted journal: an edge update, a router submission row, or an epoch roll. */
export type JournalStep =
  | { kind: 'update'; snapshot: Partial<EdgeAgentResult> }
  | { kind: 'submission'; submission: Submission }
  | { kind: 'roll'; epoch: string };

/** A message of a scripted snapshot. */
export const user = (text: string) => ({ role: 'user' as const, text });
export const assistant = (text: string) => ({ role: 'assistant' as const, text });

/** Whose journal a chain writes (a saved access: history stores it). */
export interface ChainScope {
  actorId: string;
  edgeId: string;
  accessId: string;
}

/** One session's messages as the router writes them (sequence and prev_stream_seq chain). */
export class JournalChain {
  readonly sid = sessionId();
  private epoch = 'e1';
  private sequence = 0;
  private revision = 0;
  private prev = 0;
  private cursor = 0;

  constructor(
    private readonly scope: ChainScope,
    private readonly steps: readonly JournalStep[],
    /** Where `publish*` write (only needed by suites that go through the stream). */
    private readonly harness?: HistoryHarness,
  ) {}

  /** The next message of the script (a roll is taken on the way); null at the end. */
  next(): JournalMessage | null {
    for (;;) {
      const step = this.steps[this.cursor++];
      if (!step) return null;
      if (step.kind === 'roll') {
        this.epoch = step.epoch;
        this.sequence = 0;
        continue;
      }
      this.sequence += 1;
      const scope = { ...this.scope, sessionId: this.sid };
      if (step.kind === 'update') this.revision += 1;
      const place = { epoch: this.epoch, revision: this.revision, recordedAt: 1_000 + this.sequence };
      const row =
        step.kind === 'update'
          ? updateRow(scope, place, step.snapshot)
          : submissionRow(scope, place, step.submission);
      row.sequence = this.sequence;
      return row;
    }
  }

  /** Publishes the next message, chained after the previous one; null at the end. */
  async publishNext(): Promise<number | null> {
    const message = this.next();
    if (!message) return null;
    message.prev_stream_seq = this.prev;
    this.prev = await this.stream().publishRaw(this.sid, this.stream().encode(message));
    return this.prev;
  }

  /** Publishes bytes that are not the router's on this subject, outside the chain. */
  async publishForeign(data: Uint8Array): Promise<number> {
    return this.stream().publishRaw(this.sid, data);
  }

  /** Publishes the next message as the chain's link, but spoiled so history can never store it. */
  async publishSpoiled(): Promise<number> {
    const message = this.next()!;
    message.prev_stream_seq = this.prev;
    this.prev = await this.stream().publishRaw(
      this.sid,
      this.stream().encode({ ...message, edge_id: 'not-a-connector' }),
    );
    return this.prev;
  }

  private stream(): HistoryHarness {
    if (!this.harness) throw new Error('This chain was made without a harness to publish to.');
    return this.harness;
  }
}
