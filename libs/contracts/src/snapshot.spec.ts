import { result } from './edge-agent.js';
import { LIVE_ONLY_FIELDS, withoutLiveOnlyFields } from './snapshot.js';

test('live-only fields are dropped and the conversation is kept, without touching the input', () => {
  const live = result('ok', {
    session_id: 'a'.repeat(32),
    revision: 7,
    messages: [{ role: 'user', text: 'hi' }],
    models: [{ id: 'm' }],
    approvals: [{ id: 'b'.repeat(32), command: 'ls' }],
    input_requests: [{ id: 'c'.repeat(32) }],
    permissions_available: true,
    skills: [{ id: 'd'.repeat(32) }],
    archived: true,
    history_persistent: true,
  });
  const stored = withoutLiveOnlyFields(live);
  for (const field of LIVE_ONLY_FIELDS) expect(stored).not.toHaveProperty(field);
  expect(stored).toMatchObject({ status: 'ok', revision: 7, messages: [{ role: 'user', text: 'hi' }] });
  expect(live.approvals).toHaveLength(1);
});
