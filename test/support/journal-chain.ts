// The journal's chain as JetStream holds it (docs/architecture.md invariants 1–2): within each
// epoch the sequences run 1, 2, 3, … with no gap or reuse, and every row names the stream
// sequence of the row before it on the subject.
import { expect } from '@jest/globals';

export interface ChainedRow {
  /** The message's JetStream sequence. */
  seq: number;
  entry: { epoch: string; sequence?: number; prev_stream_seq?: number };
}

export function expectContiguousJournal(rows: readonly ChainedRow[]): void {
  let previousSeq = 0;
  let expected = 1;
  let epoch = rows[0]?.entry.epoch;
  for (const { seq, entry } of rows) {
    if (entry.epoch !== epoch) {
      epoch = entry.epoch;
      expected = 1;
    }
    expect(entry.sequence).toBe(expected);
    expect(entry.prev_stream_seq).toBe(previousSeq);
    previousSeq = seq;
    expected += 1;
  }
}
