import { result } from '#contracts';
import { historyPage, mergeSessions } from './sessions-merge.js';

describe('mergeSessions', () => {
  const stored = {
    sessions: [
      { session_id: 'a', title: 'A' },
      { session_id: 'b', title: 'B' },
    ],
    total: 2,
  };

  it('overlays live state and appends unsaved live sessions on page 1', () => {
    const live = result('ok', {
      sessions: [
        { session_id: 'b', running: true, closed: false, status: 'ok' },
        { session_id: 'c', title: 'C' },
      ],
    });
    const merged = mergeSessions(live, stored, 1);
    expect(merged.status).toBe('ok');
    expect(merged.history_total).toBe(2);
    expect(merged.history_persistent).toBe(true);
    expect(merged.sessions).toEqual([
      { session_id: 'a', title: 'A', running: false, closed: true, status: 'session_closed' },
      { session_id: 'b', title: 'B', running: true, closed: false, status: 'ok' },
      { session_id: 'c', title: 'C' },
    ]);
  });

  it('lists history alone when the edge is offline, and does not append on later pages', () => {
    const merged = mergeSessions(result('unavailable'), stored, 2);
    expect(merged.status).toBe('ok');
    expect(merged.sessions?.map((session) => session.session_id)).toEqual(['a', 'b']);
  });

  it('parses the page, defaulting to 1', () => {
    expect(historyPage(undefined)).toBe(1);
    expect(historyPage('3')).toBe(3);
    expect(historyPage('x')).toBe(1);
    expect(historyPage('0')).toBe(1);
  });
});
