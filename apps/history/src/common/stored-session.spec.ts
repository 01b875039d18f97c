import type { EdgeAgentResult } from '#contracts';
import { archivedView, resumeSeed, storedSnapshot } from './stored-session.js';

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

describe('archivedView', () => {
  it('is ok, archived, closed and not running, with the title override on top', () => {
    const view = archivedView(
      {
        version: 1,
        status: 'turn_failed',
        session_id: 's1',
        title: 'live',
        running: true,
        approvals: [{ id: 'a' }],
      },
      'Renamed',
    );
    expect(view).toEqual({
      version: 1,
      status: 'ok',
      session_id: 's1',
      title: 'Renamed',
      running: false,
      closed: true,
      archived: true,
      history_persistent: true,
    });
  });
});

describe('resumeSeed', () => {
  it('carries the display state, never the native thread id', () => {
    const seed = resumeSeed(
      {
        version: 1,
        status: 'ok',
        session_id: 's1',
        thread_id: 'native-thread',
        revision: 9,
        window: 2,
        title: 'stored',
        model: 'm1',
        started_at: '2026-01-01T00:00:00Z',
        messages: [{ role: 'user', text: 'hi' }],
      },
      null,
    );
    expect(seed).toEqual({
      session_id: 's1',
      revision: 9,
      window: 2,
      title: 'stored',
      model: 'm1',
      started_at: '2026-01-01T00:00:00Z',
      messages: [{ role: 'user', text: 'hi' }],
    });
    expect(JSON.stringify(seed)).not.toContain('native-thread');
  });
});
