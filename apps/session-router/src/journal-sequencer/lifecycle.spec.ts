import { lifecycleEventSchema, result, type EdgeAgentResult } from '#contracts';
import { deletedEvent, deriveLifecycle, lifecycleView, type LifecycleRow } from './lifecycle.js';

const SID = '0123456789abcdef0123456789abcdef';
const ROW: LifecycleRow = {
  session_id: SID,
  edge_id: '42',
  actor_id: '7',
  access_id: 'a'.repeat(32),
  epoch: 'e1',
  sequence: 3,
  at: 1000,
};
const snap = (fields: Partial<EdgeAgentResult> = {}): EdgeAgentResult =>
  result('ok', { session_id: SID, ...fields });
const types = (previous: EdgeAgentResult | null, next: EdgeAgentResult): string[] =>
  deriveLifecycle(previous && lifecycleView(previous), next, ROW).map((event) => event.type);

describe('deriveLifecycle', () => {
  it('announces a session on its first row, and a turn when it is already running', () => {
    expect(types(null, snap())).toEqual(['session.started']);
    expect(types(null, snap({ running: true }))).toEqual(['session.started', 'turn.started']);
  });

  it('derives turn, approval, expiry and close transitions between consecutive rows', () => {
    expect(types(snap(), snap({ running: true }))).toEqual(['turn.started']);
    expect(types(snap({ running: true }), snap({ running: true, approvals: [{ id: 'p1' }] }))).toEqual([
      'approval.requested',
    ]);
    expect(types(snap({ running: true, approvals: [{ id: 'p1' }] }), snap({ running: true }))).toEqual([
      'approval.resolved',
    ]);
    expect(types(snap({ running: true }), snap())).toEqual(['turn.completed']);
    expect(types(snap(), result('expired', { session_id: SID }))).toEqual(['session.expired']);
    expect(types(snap(), snap({ closed: true }))).toEqual(['session.closed']);
  });

  it('emits nothing when nothing lifecycle-relevant changed', () => {
    expect(
      types(snap({ running: true }), snap({ running: true, messages: [{ role: 'agent', text: 'x' }] })),
    ).toEqual([]);
    expect(types(snap({ closed: true }), snap({ closed: true }))).toEqual([]);
  });

  it('builds valid events with deterministic ids and no content', () => {
    const previous = lifecycleView(snap({ running: true, approvals: [{ id: 'p1', command: 'rm -rf /' }] }));
    const events = deriveLifecycle(
      previous,
      snap({
        title: 'secret title',
        messages: [{ role: 'user', text: 'secret prompt' }],
        turn_timing: { dispatch_ms: 5, first_reply_ms: null, finished_ms: 90 },
      }),
      ROW,
    );
    expect(events.map((event) => event.id)).toEqual([
      `${SID}:e1:3:approval.resolved:p1`,
      `${SID}:e1:3:turn.completed`,
    ]);
    for (const event of events) expect(lifecycleEventSchema.safeParse(event).success).toBe(true);
    expect(events[1]?.data).toEqual({
      status: 'ok',
      turn_timing: { dispatch_ms: 5, first_reply_ms: null, finished_ms: 90 },
    });
    expect(JSON.stringify(events)).not.toMatch(/secret|rm -rf/);
  });
});

describe('deletedEvent', () => {
  it('sits at the journal head with a deterministic id, ids only', () => {
    const session = { session_id: SID, edge_id: '42', actor_id: '7', access_id: 'a'.repeat(32) };
    const event = deletedEvent(session, { epoch: 'e1', sequence: 9 }, 5000);
    expect(event).toEqual({
      v: 1,
      id: `${SID}:e1:9:session.deleted`,
      type: 'session.deleted',
      ...session,
      at: 5000,
      epoch: 'e1',
      sequence: 9,
      data: {},
    });
    expect(lifecycleEventSchema.safeParse(event).success).toBe(true);
    // The same head gives the same id, whenever it is built (a delete processed twice).
    expect(deletedEvent(session, { epoch: 'e1', sequence: 9 }, 9999).id).toBe(event.id);
    const { access_id: _unused, ...withoutAccess } = session;
    expect(deletedEvent(withoutAccess, { epoch: 'e1', sequence: 9 }, 1)).not.toHaveProperty('access_id');
  });
});
