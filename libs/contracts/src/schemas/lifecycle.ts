// Lifecycle event schemas: strict for the router, loose for consumers and the published contract.
import { z } from 'zod';
import { LIFECYCLE_EVENT_TYPES, type LifecycleEvent } from '../internal/lifecycle.js';
import { EPOCH_MAX_LENGTH } from '../limits.js';
import { actorIdSchema, internalIdSchema, edgeIdSchema, timestampSchema } from './internal-fields.js';

const LIFECYCLE_EVENT_ID_MAX_LENGTH = 512;
const LIFECYCLE_DATA_STRING_MAX_LENGTH = 128;
const lifecycleDataStringSchema = z.string().min(1).max(LIFECYCLE_DATA_STRING_MAX_LENGTH);

/**
 * A lifecycle event's shape, built twice: strict for the producer (the router checks every event
 * it publishes) and loose for consumers and the published JSON Schema (within `v: 1` fields are
 * only ever added, so a consumer must ignore the ones it does not know).
 */
function lifecycleEventObject<T extends z.ZodType>(
  object: typeof z.strictObject | typeof z.looseObject,
  type: T,
) {
  return object({
    v: z.literal(1).describe('Envelope version; changes within 1 are additive only.'),
    id: z
      .string()
      .min(1)
      .max(LIFECYCLE_EVENT_ID_MAX_LENGTH)
      .describe(
        '`<session_id>:<epoch>:<sequence>:<type>[:<approval_id>]`: unique, the JetStream message id.',
      ),
    type,
    session_id: internalIdSchema,
    edge_id: edgeIdSchema.describe('The edge (connector) running the session: a canonical decimal uint64.'),
    actor_id: actorIdSchema.describe('The user who owns the session.'),
    access_id: internalIdSchema.optional().describe('Absent for sessions not started through an access.'),
    at: timestampSchema.describe('Milliseconds since the Unix epoch when the router recorded the row.'),
    epoch: z
      .string()
      .min(1)
      .max(EPOCH_MAX_LENGTH)
      .describe('The journal epoch of the row that caused the event.'),
    sequence: z.int().min(1).describe('The journal sequence of that row (restarts at 1 in a new epoch).'),
    data: object({
      status: lifecycleDataStringSchema.optional().describe('turn.completed, session.expired: the status.'),
      turn_timing: object({
        dispatch_ms: z.number().nullable().optional(),
        first_reply_ms: z.number().nullable().optional(),
        finished_ms: z.number().nullable().optional(),
      })
        .optional()
        .describe('turn.completed: the edge timing of the turn, when observed.'),
      approval_id: lifecycleDataStringSchema.optional().describe('approval.requested, approval.resolved.'),
      approval_kind: lifecycleDataStringSchema
        .optional()
        .describe('approval.requested, when the agent names one.'),
    }).describe('Per type; never prompts, output, titles, commands or paths.'),
  });
}

/** The producer's check: exactly the v1 fields, known types only. */
export const lifecycleEventSchema: z.ZodType<LifecycleEvent> = lifecycleEventObject(
  z.strictObject,
  z.enum(LIFECYCLE_EVENT_TYPES),
);

/** The published v1 contract (docs/events): known types, unknown fields allowed. */
export const publishedLifecycleEventSchema = lifecycleEventObject(
  z.looseObject,
  z.enum(LIFECYCLE_EVENT_TYPES).describe('The event type; consumers skip (and ack) types they do not know.'),
).describe('A session lifecycle event, version 1 (docs/events.md).');

/** What a consumer reads: any type, unknown fields ignored (see parseLifecycleEvent). */
export const tolerantLifecycleEventSchema = lifecycleEventObject(z.object, z.string().min(1).max(64));
