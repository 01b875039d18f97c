import type { EdgeAgentResult } from '#contracts';
import { storedSnapshot } from './journal.service.js';

describe('storedSnapshot', () => {
  it('removes live-only fields and keeps the session content', () => {
    const snapshot: EdgeAgentResult = {
      version: 1,
      status: 'ok',
      session_id: 's1',
      title: 'Fix the build',
      messages: [{ role: 'user', text: 'hello' }],
      models: [{ id: 'm' }],
      approvals: [{ id: 'a' }],
      input_requests: [{ id: 'i', questions: [] }],
      permissions_available: true,
      skills: [{ id: 'k', name: 'skill' }],
      sessions: [{ session_id: 's2' }],
      directories: [{ name: 'd', path: '/d' }],
      history_persistent: true,
      archived: true,
    };
    expect(storedSnapshot(snapshot)).toEqual({
      version: 1,
      status: 'ok',
      session_id: 's1',
      title: 'Fix the build',
      messages: [{ role: 'user', text: 'hello' }],
    });
  });
});
