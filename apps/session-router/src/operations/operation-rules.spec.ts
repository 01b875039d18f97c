import { Limits, result, sentMessageItemId } from '#contracts';
import {
  asReplay,
  isExpiredId,
  parseOperationId,
  recordableAnswer,
  refusalStatus,
  retentionExpiry,
  settleDispatch,
  withoutEnvelope,
} from './operation-rules.js';

const NOW = 1_800_000_000_000;
const HEX = 'a'.repeat(32);

describe('operation ids', () => {
  it('accepts <13-digit ms>-<32 hex> and returns its timestamp', () => {
    expect(parseOperationId(`${NOW}-${HEX}`, NOW)).toEqual({ ok: true, timestamp: NOW });
  });

  it.each(['abc', `${NOW}-${'A'.repeat(32)}`, `${NOW}-${HEX}0`, `0${NOW}-${HEX}`, `${NOW}_${HEX}`])(
    'refuses the malformed id %s',
    (id) => {
      expect(parseOperationId(id, NOW).ok).toBe(false);
    },
  );

  it('refuses an id dated more than the skew ahead, and allows one just inside it', () => {
    const skew = Limits.OPERATION_FUTURE_SKEW_MS;
    expect(parseOperationId(`${NOW + skew}-${HEX}`, NOW).ok).toBe(true);
    expect(parseOperationId(`${NOW + skew + 1}-${HEX}`, NOW).ok).toBe(false);
  });

  it('expires an unseen id older than 24 h, not one exactly at the bound', () => {
    expect(isExpiredId(NOW - Limits.OPERATION_MAX_NEW_AGE_MS, NOW)).toBe(false);
    expect(isExpiredId(NOW - Limits.OPERATION_MAX_NEW_AGE_MS - 1, NOW)).toBe(true);
  });

  it('keeps a record 24 h + 5 min past the later of its id time and its recording', () => {
    expect(retentionExpiry(NOW - 1_000, NOW)).toBe(NOW + Limits.OPERATION_RETENTION_MS);
    expect(retentionExpiry(NOW + 60_000, NOW)).toBe(NOW + 60_000 + Limits.OPERATION_RETENTION_MS);
  });
});

describe('refusal statuses', () => {
  it.each([
    ['agent_session_operation_conflict', 'invalid_request'],
    ['agent_session_operation_invalid', 'invalid_request'],
    ['agent_session_operation_expired', 'invalid_request'],
    ['agent_session_item_revision_stale', 'invalid_request'],
    ['agent_session_already_resolved', 'invalid_request'],
    ['agent_session_checkpoint_stale', 'invalid_request'],
    ['agent_session_operation_capacity', 'busy'],
    ['agent_session_operation_unknown', 'unavailable'],
    ['execution_owner_reconciling', 'unavailable'],
    ['agent_session_ownership_unknown', 'not_found'],
  ] as const)('%s answers %s', (code, status) => {
    expect(refusalStatus(code)).toBe(status);
  });
});

describe('dispatch settlement', () => {
  it('accepts ok, whatever the delivery says', () => {
    expect(settleDispatch(result('ok'), 'answered')).toEqual({ state: 'accepted' });
  });

  it('rejects a first-hand refusal and a call nobody received', () => {
    expect(settleDispatch(result('busy'), 'answered')).toEqual({ state: 'rejected', reason: 'busy' });
    expect(settleDispatch(result('unavailable'), 'not_delivered')).toEqual({
      state: 'rejected',
      reason: 'unavailable',
    });
    // Refused before the edge was asked (the stored-sessions checks).
    expect(settleDispatch(result('busy'), undefined)).toEqual({ state: 'rejected', reason: 'busy' });
  });

  it('never rejects an unconfirmed delivery: it is unknown', () => {
    expect(settleDispatch(result('unavailable'), 'unconfirmed')).toEqual({
      state: 'unknown',
      reason: 'dispatch_unconfirmed',
    });
  });
});

describe('replies', () => {
  it('names the last user message of the reply window as the sent item', () => {
    const reply = result('ok', {
      window: 3,
      messages: [
        { role: 'user', text: 'a' },
        { role: 'assistant', text: 'b' },
        { role: 'user', text: 'c' },
        { role: 'assistant', text: 'd' },
      ],
    });
    expect(sentMessageItemId(reply)).toBe('m:3:2');
    expect(sentMessageItemId(result('ok'))).toBeUndefined();
  });

  it('marks a replay without touching the recorded answer', () => {
    const answer = result('ok', { operation: { client_operation_id: 'x', replayed: false, fence: 2 } });
    expect(asReplay(answer).operation).toEqual({ client_operation_id: 'x', replayed: true, fence: 2 });
    expect(answer.operation?.replayed).toBe(false);
  });

  it('bounds what the ledger keeps of a large reply', () => {
    const big = result('ok', {
      session_id: 's',
      revision: 4,
      messages: [{ role: 'assistant', text: 'x'.repeat(100_000) }],
      operation: { client_operation_id: 'x', replayed: false, fence: 1 },
    });
    expect(recordableAnswer(big)).toEqual(
      result('ok', {
        session_id: 's',
        revision: 4,
        operation: { client_operation_id: 'x', replayed: false, fence: 1 },
      }),
    );
  });

  it('strips the envelope before a request reaches an edge', () => {
    expect(
      withoutEnvelope({
        edge_id: '1',
        action: 'approve',
        approval_id: 'a',
        client_operation_id: 'x',
        payload_fingerprint: 'f',
        expected_runtime_fence: 1,
        expected_revision: 1,
      }),
    ).toEqual({ edge_id: '1', action: 'approve', approval_id: 'a' });
  });
});
