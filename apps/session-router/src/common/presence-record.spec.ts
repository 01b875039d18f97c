import { Limits } from '#contracts';
import {
  isOffline,
  parsePresence,
  presenceTtlMs,
  restartedSince,
  type PresenceRecord,
} from './presence-record.js';

const record = (extra: Partial<PresenceRecord> = {}): PresenceRecord => ({
  device: 'laptop',
  agent_kinds: ['scripted'],
  installations: 1,
  live_sessions: 0,
  max_sessions: 4,
  seen_at: 1_000,
  ttl_ms: 2_500,
  ...extra,
});

describe('presence rules', () => {
  it('keeps an edge online for 2 of its heartbeat intervals, or the old TTL when it names none', () => {
    expect(presenceTtlMs({ interval_ms: 1_000 })).toBe(2_000);
    expect(presenceTtlMs({ interval_ms: 333 })).toBe(666);
    expect(presenceTtlMs({})).toBe(Limits.EDGE_PRESENCE_TTL_MS);
  });

  it('reads stored records, and treats an unreadable one as absent', () => {
    expect(parsePresence(JSON.stringify(record()))).toEqual(record());
    expect(parsePresence(JSON.stringify({ ...record(), leaving: true }))?.leaving).toBe(true);
    // A record written before ttl_ms existed keeps the old TTL.
    const { ttl_ms: _ttl, ...legacy } = record();
    expect(parsePresence(JSON.stringify(legacy))?.ttl_ms).toBe(Limits.EDGE_PRESENCE_TTL_MS);
    expect(parsePresence(null)).toBeNull();
    expect(parsePresence('{nope')).toBeNull();
    expect(parsePresence(JSON.stringify({ device: 'x' }))).toBeNull();
  });

  it('is offline when leaving, or when gone for longer than the grace, never while present', () => {
    expect(isOffline(record({ leaving: true }), 1_000, 2_500, 1_001)).toBe(true);
    expect(isOffline(record(), 1_000, 2_500, 999_999)).toBe(false);
    // Gone within the grace: lost with Redis, not with the edge.
    expect(isOffline(null, 1_000, 2_500, 3_499)).toBe(false);
    expect(isOffline(null, 1_000, 2_500, 3_500)).toBe(true);
  });
});

describe('restart detection', () => {
  it('sees a restart only when both records name a boot id and they differ', () => {
    expect(restartedSince(record({ boot_id: 'aaaa0000' }), record({ boot_id: 'bbbb1111' }))).toBe(true);
    expect(restartedSince(record({ boot_id: 'aaaa0000' }), record({ boot_id: 'aaaa0000' }))).toBe(false);
    // First heartbeat ever (or after the record expired), and edges that predate boot ids.
    expect(restartedSince(null, record({ boot_id: 'bbbb1111' }))).toBe(false);
    expect(restartedSince(record(), record({ boot_id: 'bbbb1111' }))).toBe(false);
    expect(restartedSince(record({ boot_id: 'aaaa0000' }), record())).toBe(false);
  });

  it('keeps the boot id when reading a stored record back', () => {
    expect(parsePresence(JSON.stringify(record({ boot_id: 'aaaa0000' })))?.boot_id).toBe('aaaa0000');
    expect(parsePresence(JSON.stringify({ ...record(), boot_id: 7 }))?.boot_id).toBeUndefined();
  });
});
