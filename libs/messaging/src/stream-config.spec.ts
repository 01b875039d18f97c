import { DiscardPolicy, RetentionPolicy, StorageType, type StreamConfig } from '@nats-io/jetstream';
import { Subjects } from '#contracts';
import { auditStreamSpec } from './audit-stream.js';
import { sessionsStreamSpec } from './jetstream.js';
import { compareStream, StreamConfigError, streamConfig } from './stream-config.js';

const subjects = new Subjects('unit');
const settings = { replicas: 3, maxAgeMs: 14 * 86_400_000, maxBytes: 0, storage: 'file' as const };
const spec = sessionsStreamSpec(subjects, settings);

/** The stream this code creates, as the server reports it back (every field filled in). */
function created(overrides: Partial<StreamConfig> = {}): StreamConfig {
  return { ...(streamConfig(spec) as StreamConfig), sealed: false, ...overrides };
}

describe('streamConfig', () => {
  it('creates the stream with the invariants and the operator settings', () => {
    expect(streamConfig(spec)).toEqual({
      name: 'UNIT_SESSIONS',
      subjects: [subjects.journalWildcard, subjects.lifecycleWildcard],
      retention: RetentionPolicy.Limits,
      discard: DiscardPolicy.Old,
      duplicate_window: 120_000_000_000,
      max_msg_size: 1024 * 1024,
      num_replicas: 3,
      max_age: 14 * 86_400_000 * 1_000_000,
      max_bytes: -1,
      storage: StorageType.File,
    });
    const audit = streamConfig(
      auditStreamSpec(subjects, { ...settings, maxBytes: 2 ** 30, storage: 'memory' }),
    );
    expect(audit).toMatchObject({
      retention: RetentionPolicy.Workqueue,
      max_bytes: 2 ** 30,
      storage: StorageType.Memory,
    });
  });
});

describe('compareStream', () => {
  it('finds nothing on the stream it would create', () => {
    expect(compareStream(spec, created())).toEqual([]);
  });

  it("reports an operator's replicas, age, size and storage as kept settings, never as broken", () => {
    const differences = compareStream(
      spec,
      created({
        num_replicas: 5,
        max_age: 3_600_000_000_000,
        max_bytes: 2 ** 30,
        storage: StorageType.Memory,
      }),
    );
    expect(differences.map((difference) => [difference.field, difference.actual])).toEqual([
      ['num_replicas', 5],
      ['max_age', 3_600_000_000_000],
      ['max_bytes', 2 ** 30],
      ['storage', StorageType.Memory],
    ]);
    expect(differences.every((difference) => difference.breaks === undefined)).toBe(true);
  });

  it('accepts a larger duplicate window, unlimited message size and extra subjects', () => {
    const differences = compareStream(
      spec,
      created({
        duplicate_window: 600_000_000_000,
        max_msg_size: -1,
        subjects: [...spec.subjects, 'other.>'],
      }),
    );
    expect(differences.filter((difference) => difference.breaks)).toEqual([]);
    expect(differences.map((difference) => difference.field)).toEqual(['duplicate_window', 'max_msg_size']);
  });

  it.each<[string, Partial<StreamConfig>]>([
    ['subjects', { subjects: [subjects.journalWildcard] }],
    ['retention', { retention: RetentionPolicy.Interest }],
    ['discard', { discard: DiscardPolicy.New }],
    ['duplicate_window', { duplicate_window: 1_000_000_000 }],
    ['max_msg_size', { max_msg_size: 4096 }],
    ['sealed', { sealed: true }],
    ['no_ack', { no_ack: true }],
    ['mirror', { mirror: { name: 'ELSEWHERE' } }],
  ])('says a stream with another %s breaks what the code relies on', (field, overrides) => {
    const broken = compareStream(spec, created(overrides)).filter((difference) => difference.breaks);
    expect(broken.map((difference) => difference.field)).toEqual([field]);
  });

  it('names the stream, every broken field and the way out in the error', () => {
    const broken = compareStream(spec, created({ subjects: ['x.>'], retention: RetentionPolicy.Workqueue }));
    const error = new StreamConfigError(spec.name, broken);
    expect(error.message).toContain('UNIT_SESSIONS');
    expect(error.message).toContain('subjects');
    expect(error.message).toContain(subjects.lifecycleWildcard);
    expect(error.message).toContain('retention');
    expect(error.message).toContain('nats stream edit');
  });

  it('holds the audit work queue to its own retention', () => {
    const audit = auditStreamSpec(subjects, settings);
    const limits = {
      ...(streamConfig(audit) as StreamConfig),
      sealed: false,
      retention: RetentionPolicy.Limits,
    };
    expect(
      compareStream(audit, limits)
        .filter((difference) => difference.breaks)
        .map((d) => d.field),
    ).toEqual(['retention']);
  });
});
