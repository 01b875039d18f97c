import { resendable } from './service-client.js';

const request = (action: string, extra: Record<string, unknown> = {}) => ({
  actor_id: 'alice',
  request: { edge_id: '1001', action, ...extra },
});

describe('resendable', () => {
  it('resends reads and presence', () => {
    for (const action of ['poll', 'watch', 'sessions', 'transcript', 'file_read', 'discover']) {
      expect(resendable('routerEdgeAgent', request(action))).toBe(true);
    }
    expect(resendable('routerPresence', { edge_ids: ['1001'] })).toBe(true);
  });

  it('resends a mutation only with the envelope, whose duplicate the router replays', () => {
    expect(resendable('routerEdgeAgent', request('send', { client_operation_id: 'x' }))).toBe(true);
    expect(resendable('routerEdgeAgent', request('approve', { client_operation_id: 'x' }))).toBe(true);
    for (const action of ['send', 'start', 'stop', 'delete', 'rename', 'file_write', 'interrupt']) {
      expect(resendable('routerEdgeAgent', request(action))).toBe(false);
    }
    // Actions that take no envelope are never resent, whatever the request carries.
    expect(resendable('routerEdgeAgent', request('start', { client_operation_id: 'x' }))).toBe(false);
    expect(resendable('routerEdgeAgent', request('no-such-action'))).toBe(false);
  });
});
