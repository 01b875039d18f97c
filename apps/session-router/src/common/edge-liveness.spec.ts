import { jest } from '@jest/globals';
import { Subjects } from '#contracts';
import { NatsBus } from '#messaging';
import type { RouterConfig } from '../config.js';
import { EdgeLiveness } from './edge-liveness.js';
import type { PresenceRecord } from './presence-record.js';
import type { RedisClient } from './redis-client.js';
import { RedisKeys } from './redis-keys.js';

const EDGE = '501';
const keys = new RedisKeys('tether');

/** Redis as the liveness round reads it: the edge's presence and its restart mark. */
function setup() {
  const stored = new Map<string, string>();
  const redis = { get: (key: string) => Promise.resolve(stored.get(key) ?? null) } as unknown as RedisClient;
  // The probe: the edge's process answers (it is alive), so only the restart rules release calls.
  const nc = { request: () => Promise.resolve({}) };
  const bus = new NatsBus(nc as never, new Subjects());
  const liveness = new EdgeLiveness(redis, keys, { edgeLivenessCheckMs: 250 } as RouterConfig, bus);
  const present = (bootId: string) => {
    const record: PresenceRecord = {
      device: 'laptop',
      agent_kinds: ['scripted'],
      installations: 1,
      live_sessions: 0,
      max_sessions: 4,
      seen_at: Date.now(),
      ttl_ms: 2_000,
      boot_id: bootId,
    };
    stored.set(keys.presence(EDGE), JSON.stringify(record));
  };
  return { liveness, present, gone: () => stored.delete(keys.presence(EDGE)) };
}

describe('EdgeLiveness, an edge restarted while calls wait', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('releases the calls made before the last read of the old boot id when another one shows up, even with no restart mark', async () => {
    const { liveness, present, gone } = setup();
    let oldReleased = 0;
    let newReleased = 0;
    present('aaaa0000');
    const stopOld = liveness.track(EDGE, () => (oldReleased += 1));
    jest.advanceTimersByTime(100);
    await liveness.check();
    // The old presence runs out; a call made now may reach the new process.
    gone();
    jest.advanceTimersByTime(100);
    const stopNew = liveness.track(EDGE, () => (newReleased += 1));
    await liveness.check();
    expect(oldReleased).toBe(0);
    present('bbbb1111');
    jest.advanceTimersByTime(100);
    await liveness.check();
    expect(oldReleased).toBe(1);
    expect(newReleased).toBe(0);
    stopOld();
    stopNew();
  });

  it('releases nothing while the boot id stays the same', async () => {
    const { liveness, present } = setup();
    let released = 0;
    present('aaaa0000');
    const stop = liveness.track(EDGE, () => (released += 1));
    for (let round = 0; round < 5; round += 1) {
      jest.advanceTimersByTime(250);
      present('aaaa0000');
      await liveness.check();
    }
    expect(released).toBe(0);
    stop();
  });
});
