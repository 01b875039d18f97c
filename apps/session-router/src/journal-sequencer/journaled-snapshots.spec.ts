import { result, type SessionUpdate } from '#contracts';
import { JournaledSnapshots } from './journaled-snapshots.js';

const SESSION = 'a'.repeat(32);

function update(revision: number, fields: Partial<SessionUpdate> = {}): SessionUpdate {
  return {
    edge_id: '101',
    edge_token: 'token',
    actor_id: 'user-1',
    session_id: SESSION,
    revision,
    emitted_at: 0,
    snapshot: result('ok', { session_id: SESSION, revision }),
    ...fields,
  };
}

describe('JournaledSnapshots', () => {
  it('keeps nothing for a session nobody holds', () => {
    const snapshots = new JournaledSnapshots();
    snapshots.offer(update(3));
    const release = snapshots.hold(SESSION, 0);
    expect(snapshots.newerThan(SESSION, 0)).toBeUndefined();
    release();
  });

  it('keeps no state that no holder waits past', () => {
    const snapshots = new JournaledSnapshots();
    const release = snapshots.hold(SESSION, 7);
    snapshots.offer(update(6));
    snapshots.offer(update(7));
    expect(snapshots.newerThan(SESSION, 0)).toBeUndefined();
    snapshots.offer(update(8));
    expect(snapshots.newerThan(SESSION, 7)?.revision).toBe(8);
    release();
  });

  it('keeps the newest revision offered while held, with its scope, and only past the cursor', () => {
    const snapshots = new JournaledSnapshots();
    const release = snapshots.hold(SESSION, 2);
    snapshots.offer(update(4, { access_id: 'b'.repeat(32) }));
    // An older revision (a retry stored late) never replaces a newer one.
    snapshots.offer(update(3));
    expect(snapshots.newerThan(SESSION, 3)).toEqual({
      revision: 4,
      owner: 'user-1',
      access: 'b'.repeat(32),
      edge: '101',
      snapshot: result('ok', { session_id: SESSION, revision: 4 }),
    });
    expect(snapshots.newerThan(SESSION, 4)).toBeUndefined();
    snapshots.offer(update(5));
    expect(snapshots.newerThan(SESSION, 4)?.access).toBe('');
    release();
  });

  it('lets go of a session when its last holder releases, once per release', () => {
    const snapshots = new JournaledSnapshots();
    const first = snapshots.hold(SESSION, 1);
    const second = snapshots.hold(SESSION, 1);
    snapshots.offer(update(2));
    first();
    first();
    expect(snapshots.newerThan(SESSION, 1)?.revision).toBe(2);
    second();
    expect(snapshots.size).toBe(0);
    const again = snapshots.hold(SESSION, 1);
    expect(snapshots.newerThan(SESSION, 1)).toBeUndefined();
    again();
  });
});
