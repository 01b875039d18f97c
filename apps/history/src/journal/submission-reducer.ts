// How a submission row folds into the stored submission (reference §1.6). The router writes a
// `pending` row before it dispatches a send and a second row with the settled state after; the
// reducer keeps the answer stable whatever order of retries, restarts and late rows it sees:
//
// - `pending` creates the submission; a `pending` row for one that is still open (`unknown`, a
//   client's explicit retry) reopens it as pending;
// - `accepted` and `rejected` are terminal: no later row changes them (a late `unknown` can never
//   reopen a settled answer);
// - a settlement for a submission that does not exist is ignored (its pending row is missing);
// - a row for another payload (a different fingerprint) is ignored: it can never merge;
// - a row that states what is already stored changes nothing, so applying it twice is harmless.
import type { DispatchState, Submission } from '#contracts';

/** The stored state the reducer compares against. */
export interface StoredSubmissionState {
  dispatchState: DispatchState;
  payloadFingerprint: string;
}

export type SubmissionTransition =
  /** Nothing to store. */
  | { kind: 'ignore' }
  /** A new submission, created by this row. */
  | { kind: 'create' }
  /** The stored submission moves to the row's state; `receipt` when it became accepted. */
  | { kind: 'update'; receipt: boolean };

const SETTLED: ReadonlySet<DispatchState> = new Set(['accepted', 'rejected']);

export function isSettled(state: DispatchState): boolean {
  return SETTLED.has(state);
}

export function reduceSubmission(
  stored: StoredSubmissionState | undefined,
  row: Submission,
): SubmissionTransition {
  if (!stored) return row.dispatch_state === 'pending' ? { kind: 'create' } : { kind: 'ignore' };
  if (stored.payloadFingerprint !== row.payload_fingerprint) return { kind: 'ignore' };
  if (isSettled(stored.dispatchState)) return { kind: 'ignore' };
  if (stored.dispatchState === row.dispatch_state) return { kind: 'ignore' };
  return { kind: 'update', receipt: row.dispatch_state === 'accepted' };
}
