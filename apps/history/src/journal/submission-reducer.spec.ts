import type { DispatchState, Submission } from '#contracts';
import { reduceSubmission, type StoredSubmissionState } from './submission-reducer.js';

const FINGERPRINT = 'a'.repeat(64);

function row(dispatch_state: DispatchState, overrides: Partial<Submission> = {}): Submission {
  return {
    client_message_id: '1764690000000-0123456789abcdef0123456789abcdef',
    fence: 1,
    payload_fingerprint: FINGERPRINT,
    dispatch_state,
    submitted_at: 1_000,
    ...overrides,
  };
}

const stored = (dispatchState: DispatchState): StoredSubmissionState => ({
  dispatchState,
  payloadFingerprint: FINGERPRINT,
});

describe('reduceSubmission (reference §1.6 transition rules)', () => {
  it('creates a submission from its pending row only', () => {
    expect(reduceSubmission(undefined, row('pending'))).toEqual({ kind: 'create' });
    for (const state of ['accepted', 'rejected', 'unknown'] as const) {
      expect(reduceSubmission(undefined, row(state))).toEqual({ kind: 'ignore' });
    }
  });

  it('moves pending and unknown to any other state; only accepted mints a receipt', () => {
    expect(reduceSubmission(stored('pending'), row('accepted'))).toEqual({ kind: 'update', receipt: true });
    expect(reduceSubmission(stored('pending'), row('rejected'))).toEqual({ kind: 'update', receipt: false });
    expect(reduceSubmission(stored('pending'), row('unknown'))).toEqual({ kind: 'update', receipt: false });
    expect(reduceSubmission(stored('unknown'), row('accepted'))).toEqual({ kind: 'update', receipt: true });
    expect(reduceSubmission(stored('unknown'), row('rejected'))).toEqual({ kind: 'update', receipt: false });
    expect(reduceSubmission(stored('unknown'), row('pending'))).toEqual({ kind: 'update', receipt: false });
  });

  it('never reopens a settled answer, a late unknown included', () => {
    for (const settled of ['accepted', 'rejected'] as const) {
      for (const state of ['pending', 'accepted', 'rejected', 'unknown'] as const) {
        expect(reduceSubmission(stored(settled), row(state))).toEqual({ kind: 'ignore' });
      }
    }
  });

  it('changes nothing when the same row applies twice', () => {
    for (const state of ['pending', 'unknown'] as const) {
      expect(reduceSubmission(stored(state), row(state))).toEqual({ kind: 'ignore' });
    }
  });

  it('ignores a row for another payload', () => {
    const other = row('accepted', { payload_fingerprint: 'b'.repeat(64) });
    expect(reduceSubmission(stored('pending'), other)).toEqual({ kind: 'ignore' });
  });
});
