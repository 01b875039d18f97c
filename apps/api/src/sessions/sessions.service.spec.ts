import { formatCursor, parseCursor, SessionsService } from './sessions.service.js';
import type { ServiceClient } from '../common/service-client.js';

describe('journal page query', () => {
  const sessions = new SessionsService({} as ServiceClient);

  it('reads the opaque cursor at its last colon, and writes it back the same way', () => {
    expect(parseCursor('e:1:42')).toEqual({ epoch: 'e:1', sequence: 42 });
    expect(formatCursor({ epoch: 'e:1', sequence: 42 })).toBe('e:1:42');
    for (const bad of ['', 'e', ':3', 'e:', 'e:-1', 'e:01', 'e:1.5', `e:${'9'.repeat(17)}`]) {
      expect(parseCursor(bad)).toBeNull();
    }
  });

  it('keeps the limit strict at the boundary: 1 and 200 pass, 0 and 201 are refused', () => {
    expect(sessions.pageQuery(undefined, undefined, undefined)).toEqual({ direction: 'tail', limit: 40 });
    expect(sessions.pageQuery('after', 'e:0', '1')).toEqual({
      direction: 'after',
      cursor: { epoch: 'e', sequence: 0 },
      limit: 1,
    });
    expect(sessions.pageQuery('before', undefined, '200').limit).toBe(200);
    for (const limit of ['0', '201', '-1', '1.5', 'x', '', ['1', '2']]) {
      expect(() => sessions.pageQuery('tail', undefined, limit)).toThrow();
    }
    expect(() => sessions.pageQuery('sideways', undefined, undefined)).toThrow();
  });
});
