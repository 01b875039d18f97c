import { auditRecordSchema } from '#contracts';
import { auditRecord, isAudited, refusedAuditRecord, traceIdOf } from './audit.publisher.js';

describe('audit records', () => {
  it('keep ids and outcome only, never request text, title, path or file data', () => {
    const record = auditRecord(
      'alice',
      {
        edge_id: '7',
        action: 'send',
        access_id: 'a'.repeat(32),
        session_id: 's'.repeat(32),
        text: 'the secret prompt',
        title: 'secret title',
        file: { path: 'secret/path.txt', data: 'c2VjcmV0' },
      },
      'session_closed',
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      1_000,
    );
    expect(record).toEqual({
      v: 1,
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      actor_id: 'alice',
      action: 'send',
      edge_id: '7',
      access_id: 'a'.repeat(32),
      session_id: 's'.repeat(32),
      status: 'session_closed',
      success: true,
      trace_id: '0af7651916cd43dd8448eb211c80319c',
      occurred_at: 1_000,
    });
    expect(JSON.stringify(record)).not.toMatch(/secret/);
  });
});

describe('audit records', () => {
  it('count only ok and session_closed as success', () => {
    expect(auditRecord('a', { edge_id: '1', action: 'stop' }, 'busy', undefined).success).toBe(false);
    expect(auditRecord('a', { edge_id: '1', action: 'stop' }, 'http_404', undefined).success).toBe(false);
  });

  it('audit mutating actions only', () => {
    expect(['send', 'rename', 'delete', 'discard', 'file_write'].every(isAudited)).toBe(true);
    expect(['poll', 'watch', 'sessions', 'transcript', 'file_read', 'discover'].some(isAudited)).toBe(false);
  });

  it('take the trace id from a valid traceparent only', () => {
    expect(traceIdOf(undefined)).toBeUndefined();
    expect(traceIdOf('garbage')).toBeUndefined();
    expect(traceIdOf(`00-${'0'.repeat(32)}-b7ad6b7169203331-01`)).toBeUndefined();
  });

  it('record a refused call with the ids it sent, malformed ones included, when they can be stored', () => {
    const cases: [unknown, Record<string, unknown>][] = [
      [
        { action: 'send', edge_id: '0', text: 'secret prompt' },
        { action: 'send', edge_id: '0' },
      ],
      [
        { action: 'poll', edge_id: 7, session_id: 'null' },
        { action: 'poll', edge_id: '7', session_id: 'null' },
      ],
      [
        { action: 'send', edge_id: '7', session_id: 's'.repeat(33) },
        { edge_id: '7', session_id: 's'.repeat(33) },
      ],
      // A 200 KB id, a NUL byte or a non-string cannot be stored as sent: left out.
      [
        { action: 'watch', edge_id: '7', session_id: 's'.repeat(200_000) },
        { action: 'watch', edge_id: '7' },
      ],
      [
        { action: 'stop', edge_id: '7\u0000', access_id: { nested: true } },
        { action: 'stop', edge_id: '' },
      ],
      [{ action: 'no-such-action' }, { action: 'invalid', edge_id: '' }],
      [undefined, { action: 'invalid', edge_id: '' }],
    ];
    for (const [body, expected] of cases) {
      const record = refusedAuditRecord('alice', body, 'http_400', undefined, 1_000);
      expect(record).toMatchObject({ ...expected, actor_id: 'alice', status: 'http_400', success: false });
      if (!('session_id' in expected)) expect(record.session_id).toBeUndefined();
      expect(JSON.stringify(record)).not.toMatch(/secret/);
      // What the api publishes, history's consumer accepts.
      expect(auditRecordSchema.safeParse(record).success).toBe(true);
    }
  });
});
