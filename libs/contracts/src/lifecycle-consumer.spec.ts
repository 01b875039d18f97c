import { parseLifecycleEvent } from './lifecycle-consumer.js';

const EVENT = {
  v: 1,
  id: '0123456789abcdef0123456789abcdef:e1:1:session.started',
  type: 'session.started',
  session_id: '0123456789abcdef0123456789abcdef',
  edge_id: '42',
  actor_id: 'user-7',
  at: 1767225600000,
  epoch: 'e1',
  sequence: 1,
  data: {},
};

test('a v1 event with fields added later is an event, the unknown fields dropped', () => {
  const parsed = parseLifecycleEvent({ ...EVENT, region: 'eu', data: { later: 1 } });
  expect(parsed.kind).toBe('event');
  if (parsed.kind !== 'event') return;
  expect(parsed.event).not.toHaveProperty('region');
  expect(parsed.event.data).toEqual({});
});

test('unknown types and versions are skipped with a reason, garbage is invalid', () => {
  expect(parseLifecycleEvent({ ...EVENT, type: 'session.paused' })).toEqual({
    kind: 'skip',
    reason: 'unknown_type',
    type: 'session.paused',
  });
  expect(parseLifecycleEvent({ ...EVENT, v: 2, type: 'x', shape: 'new' })).toEqual({
    kind: 'skip',
    reason: 'unknown_version',
  });
  expect(parseLifecycleEvent('nope')).toEqual({ kind: 'skip', reason: 'invalid' });
  expect(parseLifecycleEvent({ ...EVENT, sequence: 0 })).toEqual({ kind: 'skip', reason: 'invalid' });
});
