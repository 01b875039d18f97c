import type { SessionUpdate } from '#contracts';
import { journalEntry, journalMsgId } from './journal-entry.js';

describe('journalEntry', () => {
  it('keeps the conversation and drops live-only fields', () => {
    const update: SessionUpdate = {
      edge_id: '7',
      edge_token: 'secret-token',
      actor_id: 'u1',
      access_id: 'a'.repeat(32),
      session_id: 's'.repeat(32),
      revision: 4,
      emitted_at: 10,
      snapshot: {
        version: 1,
        status: 'ok',
        revision: 4,
        messages: [{ role: 'user', text: 'hi' }],
        models: [{ id: 'm' }],
        approvals: [{ id: 'x' }],
        input_requests: [{ id: 'y' }],
        permissions_available: true,
        skills: [{ id: 'k' }],
        sessions: [{ session_id: 'z' }],
        directories: [{ name: 'd', path: '/d' }],
      },
    };
    const entry = journalEntry(update, 'e1', 20);
    expect(entry).toEqual({
      v: 1,
      session_id: update.session_id,
      edge_id: '7',
      actor_id: 'u1',
      access_id: update.access_id,
      epoch: 'e1',
      revision: 4,
      snapshot: { version: 1, status: 'ok', revision: 4, messages: [{ role: 'user', text: 'hi' }] },
      emitted_at: 10,
      recorded_at: 20,
    });
    expect(JSON.stringify(entry)).not.toContain('secret-token');
    expect(journalMsgId('s', 'e1', 4)).toBe('s:e1:4');
  });
});
