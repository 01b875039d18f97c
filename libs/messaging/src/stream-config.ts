// What a stream must be for the code that uses it, and what the operator may tune: the pure half
// of ensureStream (jetstream.ts), so the comparison is tested without a server.
import { DiscardPolicy, RetentionPolicy, StorageType, type StreamConfig } from '@nats-io/jetstream';
import type { StreamSettings } from '#config';

/**
 * One stream as the code needs it. `invariants` are what the code relies on: the subjects it
 * publishes on, the retention and discard policies its consumers and publishers assume, and the
 * floors of the duplicate window and message size. `settings` are the operator's: they only
 * shape a stream this code creates.
 */
export interface StreamSpec {
  name: string;
  subjects: string[];
  retention: RetentionPolicy;
  discard: DiscardPolicy;
  /** Nanoseconds; idempotent publishes (`Nats-Msg-Id`) rely on at least this much. */
  minDuplicateWindowNs: number;
  /** The largest message the code publishes; a stream must take at least this. */
  minMaxMsgSize: number;
  settings: StreamSettings;
}

export interface StreamDifference {
  field: keyof StreamConfig;
  /** What this code would have created. */
  wanted: unknown;
  /** What the running stream has. */
  actual: unknown;
  /** Set when the difference breaks an invariant: why the code cannot run on this stream. */
  breaks?: string;
}

const NS_PER_MS = 1_000_000;

/** The configuration of a stream this code creates: the invariants and the operator's settings. */
export function streamConfig(spec: StreamSpec): Partial<StreamConfig> & { name: string } {
  const { settings } = spec;
  return {
    name: spec.name,
    subjects: spec.subjects,
    retention: spec.retention,
    discard: spec.discard,
    duplicate_window: spec.minDuplicateWindowNs,
    max_msg_size: spec.minMaxMsgSize,
    num_replicas: settings.replicas,
    max_age: settings.maxAgeMs * NS_PER_MS,
    max_bytes: settings.maxBytes === 0 ? -1 : settings.maxBytes,
    storage: settings.storage === 'memory' ? StorageType.Memory : StorageType.File,
  };
}

/** Every invariant the existing stream breaks, then every setting it holds otherwise. */
export function compareStream(spec: StreamSpec, actual: StreamConfig): StreamDifference[] {
  return [...brokenInvariants(spec, actual), ...settingDifferences(spec, actual)];
}

function brokenInvariants(spec: StreamSpec, actual: StreamConfig): StreamDifference[] {
  const broken: StreamDifference[] = [];
  const missing = spec.subjects.filter((subject) => !(actual.subjects ?? []).includes(subject));
  if (missing.length > 0) {
    broken.push({
      field: 'subjects',
      wanted: spec.subjects,
      actual: actual.subjects ?? [],
      breaks: `it does not take ${missing.join(', ')}: publishes there would find no stream`,
    });
  }
  if (actual.retention !== spec.retention) {
    broken.push({
      field: 'retention',
      wanted: spec.retention,
      actual: actual.retention,
      breaks:
        spec.retention === RetentionPolicy.Limits
          ? 'consumers read it independently and replay it, which only limits retention allows'
          : 'a record must leave once stored, and only a work queue removes it on ack',
    });
  }
  if (actual.discard !== spec.discard) {
    broken.push({
      field: 'discard',
      wanted: spec.discard,
      actual: actual.discard,
      breaks: 'a full stream would refuse new writes instead of dropping its oldest messages',
    });
  }
  if (actual.duplicate_window < spec.minDuplicateWindowNs) {
    broken.push({
      field: 'duplicate_window',
      wanted: `>= ${spec.minDuplicateWindowNs}`,
      actual: actual.duplicate_window,
      breaks: 'a retried publish after the window would be stored twice',
    });
  }
  if (actual.max_msg_size !== -1 && actual.max_msg_size < spec.minMaxMsgSize) {
    broken.push({
      field: 'max_msg_size',
      wanted: `>= ${spec.minMaxMsgSize}`,
      actual: actual.max_msg_size,
      breaks: 'the largest messages the services publish would be refused',
    });
  }
  for (const field of ['sealed', 'no_ack'] as const) {
    if (actual[field]) {
      broken.push({
        field,
        wanted: false,
        actual: true,
        breaks: 'publishes would not be stored and acknowledged',
      });
    }
  }
  if (actual.mirror) {
    broken.push({
      field: 'mirror',
      wanted: undefined,
      actual: actual.mirror.name,
      breaks: 'a mirror takes no publishes',
    });
  }
  return broken;
}

/** The operator's settings that differ from what this code would have created: kept, logged. */
function settingDifferences(spec: StreamSpec, actual: StreamConfig): StreamDifference[] {
  const wanted = streamConfig(spec);
  const fields = ['num_replicas', 'max_age', 'max_bytes', 'storage'] as const;
  const differences: StreamDifference[] = fields
    .filter((field) => actual[field] !== wanted[field])
    .map((field) => ({ field, wanted: wanted[field], actual: actual[field] }));
  // Larger than the floors is the operator's choice too; only say so.
  if (actual.duplicate_window > spec.minDuplicateWindowNs) {
    differences.push({
      field: 'duplicate_window',
      wanted: spec.minDuplicateWindowNs,
      actual: actual.duplicate_window,
    });
  }
  if (
    actual.max_msg_size !== spec.minMaxMsgSize &&
    (actual.max_msg_size === -1 || actual.max_msg_size > spec.minMaxMsgSize)
  ) {
    differences.push({ field: 'max_msg_size', wanted: spec.minMaxMsgSize, actual: actual.max_msg_size });
  }
  return differences;
}

/** One line per difference, for the boot log and the error. */
export function describeDifference(difference: StreamDifference): string {
  const base = `${difference.field}: configured ${JSON.stringify(difference.wanted)}, stream has ${JSON.stringify(difference.actual)}`;
  return difference.breaks ? `${base} (${difference.breaks})` : base;
}

/** The existing stream breaks what the code relies on: the boot stops and says what to change. */
export class StreamConfigError extends Error {
  constructor(
    readonly stream: string,
    readonly differences: StreamDifference[],
  ) {
    super(
      `JetStream stream ${stream} cannot be used as it is: ${differences.map(describeDifference).join('; ')}. ` +
        'Fix it with `nats stream edit` (or remove it to let the service create it), then restart.',
    );
    this.name = 'StreamConfigError';
  }
}
