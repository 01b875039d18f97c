import { LIFECYCLE_EVENT_TYPES, type LifecycleEvent, type LifecycleEventType } from './internal/lifecycle.js';
import { tolerantLifecycleEventSchema } from './schemas/lifecycle.js';

/**
 * What a consumer does with one message of the lifecycle subjects: handle the event, or skip it
 * (ack it and move on; never terminate or stall on it). Skipped:
 * - `unknown_type`: a type added after this consumer was built (additive within v1);
 * - `unknown_version`: an envelope `v` other than 1 (a breaking change, published alongside v1);
 * - `invalid`: not a lifecycle event at all.
 */
export type LifecycleParse =
  | { kind: 'event'; event: LifecycleEvent }
  | { kind: 'skip'; reason: 'unknown_type' | 'unknown_version' | 'invalid'; type?: string };

const KNOWN_TYPES = new Set<string>(LIFECYCLE_EVENT_TYPES);

/**
 * Parses a lifecycle event the way a subscriber must (docs/events.md "Versioning"): fields it does
 * not know are dropped, types it does not know are skipped, not failed.
 */
export function parseLifecycleEvent(value: unknown): LifecycleParse {
  if (typeof value !== 'object' || value === null) return { kind: 'skip', reason: 'invalid' };
  const version = (value as { v?: unknown }).v;
  if (version !== 1) return { kind: 'skip', reason: version === undefined ? 'invalid' : 'unknown_version' };
  const parsed = tolerantLifecycleEventSchema.safeParse(value);
  if (!parsed.success) return { kind: 'skip', reason: 'invalid' };
  const { type } = parsed.data;
  if (!KNOWN_TYPES.has(type)) return { kind: 'skip', reason: 'unknown_type', type };
  return { kind: 'event', event: { ...parsed.data, type: type as LifecycleEventType } as LifecycleEvent };
}
