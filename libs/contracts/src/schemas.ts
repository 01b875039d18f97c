// Runtime decoders of every message that crosses a boundary (HTTP body, NATS payload, JetStream
// message). They check types and shapes; the rules of reference §2.2 live in validation.ts and
// are applied to the decoded request by validateEdgeAgentRequest / validateRpcEnvelope.
import { z } from 'zod';
import {
  EDGE_AGENT_ACTIONS,
  EDGE_AGENT_INTERNAL_ACTIONS,
  isEdgeAgentStatus,
  type AgentFile,
  type AgentFileOperation,
  type EdgeAgentAnyAction,
  type EdgeAgentRequest,
  type EdgeAgentResult,
  type EdgeAgentRPCRequest,
  type EdgeAgentStatus,
  type FileChange,
  type InputAnswer,
  type Installation,
  type Message,
  type Activity,
  type ResumeState,
} from './edge-agent.js';
import {
  AUDIT_ID_MAX_LENGTH,
  AUDIT_UNDECODED_ACTION,
  type AccessInput,
  type AuditRecord,
  type EdgeHeartbeat,
  JOURNAL_DIRECTIONS,
  type HistoryJournalPageRequest,
  type HistorySessionScope,
  type JournalEntry,
  type JournalWireMessage,
  type SealedJournalEntry,
  type JournalSubmissionEntry,
  LIFECYCLE_EVENT_TYPES,
  type LifecycleEvent,
} from './internal.js';
import {
  ACCESSES_PAGE_SIZE_MAX,
  ACTOR_ID_MAX_LENGTH,
  AGENT_KIND_MAX_LENGTH,
  AGENT_KINDS_MAX,
  CONNECTORS_LIST_MAX,
  DEVICE_MAX_LENGTH,
  EDGE_TOKEN_MAX_LENGTH,
  EPOCH_MAX_LENGTH,
  FILE_CHUNK_MAX_BYTES,
  FILE_PATH_MAX_BYTES,
  HEARTBEAT_INSTALLATIONS_MAX,
  EDGE_HEARTBEAT_INTERVAL_MAX_MS,
  EDGE_HEARTBEAT_INTERVAL_MIN_MS,
  HISTORY_PAGE_MAX,
  INSTALLATION_ID_MAX_BYTES,
  INSTALLATION_SOURCE_MAX_LENGTH,
  INTERNAL_ID_MAX_LENGTH,
  NAME_MAX_LENGTH,
  PROJECT_MAX_BYTES,
  TITLE_MAX_RUNES,
  AUDIT_STATUS_MAX_LENGTH,
  JOURNAL_PAGE_MAX_LIMIT,
  SUBMISSION_REASON_MAX_LENGTH,
} from './limits.js';
import {
  CLIENT_OPERATION_ID_PATTERN,
  DISPATCH_STATES,
  OPERATION_REFUSAL_CODES,
  PAYLOAD_FINGERPRINT_PATTERN,
  type OperationOutcome,
  type PromptResolution,
  type Submission,
} from './operations.js';
import type { RequestName, RequestOf } from './subjects.js';
import {
  base64DecodedLength,
  hasControlChars,
  isEdgeId,
  isStorableId,
  isOpaqueId,
  normalizeDecimalUint64,
  validateEdgeAgentRequest,
  type ValidationResult,
} from './validation.js';

export { validateEdgeAgentRequest, validateRpcEnvelope } from './validation.js';
export type { ValidationResult } from './validation.js';

// ---------------------------------------------------------------------------------------------
// edge_agent requests (HTTP body and the `request` of edge_agent_v1).

/**
 * `uint64 edge_id`: a JSON number (non-negative safe integer, which z.int() guarantees) or a decimal string of a uint64,
 * kept as a canonical decimal string inside Tether. 0 passes here; the rules refuse it.
 */
const edgeIdInputSchema = z.union([
  z
    .int()
    .min(0)
    .transform((n) => String(n)),
  z.string().transform((s, ctx) => {
    const normalized = normalizeDecimalUint64(s);
    if (normalized === null) {
      ctx.addIssue({ code: 'custom', message: 'edge_id must be a decimal uint64' });
      return z.NEVER;
    }
    return normalized;
  }),
]);

/** `bytes data`: base64 whose decoded size fits one chunk. */
const fileDataSchema = z.string().check((ctx) => {
  const decoded = base64DecodedLength(ctx.value);
  if (decoded < 0) ctx.issues.push({ code: 'custom', message: 'file.data must be base64', input: ctx.value });
  else if (decoded > FILE_CHUNK_MAX_BYTES) {
    ctx.issues.push({
      code: 'custom',
      message: `file.data exceeds ${FILE_CHUNK_MAX_BYTES} bytes`,
      input: ctx.value,
    });
  }
});

/** `int64` fields travel as JSON numbers; the rules bound them to 0 … 20 MiB. */
const int64Schema = z.int();

const fileOperationSchema: z.ZodType<AgentFileOperation> = z.strictObject({
  path: z.string().optional(),
  name: z.string().optional(),
  transfer_id: z.string().optional(),
  offset: int64Schema.optional(),
  size: int64Schema.optional(),
  data: fileDataSchema.optional(),
});

/** proto3 JSON omits empty fields, so a missing question id or answer list means empty. */
const inputAnswerSchema: z.ZodType<InputAnswer> = z.strictObject({
  question_id: z.string().default(''),
  answers: z.array(z.string()).default([]),
});

function requestObject<A extends EdgeAgentAnyAction>(actions: readonly A[]) {
  return z.strictObject({
    edge_id: edgeIdInputSchema,
    action: z.enum(actions),
    installation_id: z.string().optional(),
    project: z.string().optional(),
    session_id: z.string().optional(),
    text: z.string().optional(),
    skill_id: z.string().optional(),
    access_id: z.string().optional(),
    directory: z.string().optional(),
    working_directory: z.string().optional(),
    cursor: z.string().optional(),
    model: z.string().optional(),
    title: z.string().optional(),
    history_page: z.string().optional(),
    approval_id: z.string().optional(),
    decision: z.string().optional(),
    permission_mode: z.string().optional(),
    input_id: z.string().optional(),
    answers: z.array(inputAnswerSchema).optional(),
    history_before: z.string().optional(),
    file: fileOperationSchema.optional(),
    attachments: z.array(z.string()).optional(),
    client_operation_id: z.string().optional(),
    expected_runtime_fence: z.int().optional(),
    payload_fingerprint: z.string().optional(),
    expected_revision: z.int().optional(),
    retry_unknown: z.boolean().optional(),
  });
}

/**
 * Strict decoder of the HTTP body of POST /api/v1/edge-agents (unknown fields refused at every
 * level). Public actions only: `snapshot` and `expire` are Tether's own and refused over HTTP.
 * Apply validateEdgeAgentRequest to the result.
 */
export const edgeAgentRequestSchema: z.ZodType<EdgeAgentRequest> = requestObject(EDGE_AGENT_ACTIONS);

/** The same object, also accepting the internal actions (what the router sends to an edge). */
const anyActionRequestSchema: z.ZodType<EdgeAgentRequest> = requestObject([
  ...EDGE_AGENT_ACTIONS,
  ...EDGE_AGENT_INTERNAL_ACTIONS,
]);

function refineWith<T>(schema: z.ZodType<T>, validate: (value: T) => ValidationResult): z.ZodType<T> {
  return schema.superRefine((value, ctx) => {
    const verdict = validate(value);
    if (!verdict.ok) ctx.addIssue({ code: 'custom', message: verdict.reason });
  });
}

// ---------------------------------------------------------------------------------------------
// Shapes shared by results and resume seeds. Results are decoded tolerantly (unknown fields are
// dropped, so a newer edge does not break an older router); what Tether sends to an edge is
// decoded strictly. Strings a proto3 writer omits when empty default to ''.

type ObjectFactory = typeof z.object;
const strictFactory: ObjectFactory = z.strictObject as ObjectFactory;

function shapes(object: ObjectFactory) {
  const agentFile: z.ZodType<AgentFile> = object({
    name: z.string().optional(),
    path: z.string().optional(),
    size: z.number().optional(),
    directory: z.boolean().optional(),
    media_type: z.string().optional(),
  });
  const message: z.ZodType<Message> = object({
    role: z.string().default(''),
    text: z.string().optional(),
    attachments: z.array(agentFile).optional(),
  });
  const fileChange: z.ZodType<FileChange> = object({
    path: z.string().optional(),
    kind: z.string().optional(),
    diff: z.string().optional(),
    move_path: z.string().optional(),
  });
  const activity: z.ZodType<Activity> = object({
    id: z.string().default(''),
    kind: z.string().default(''),
    status: z.string().optional(),
    message_index: z.number().optional(),
    duration_ms: z.number().optional(),
    command: z.string().optional(),
    directory: z.string().optional(),
    output: z.string().optional(),
    exit_code: z.number().nullable().optional(),
    changes: z.array(fileChange).optional(),
    truncated: z.boolean().optional(),
  });
  return { agentFile, message, fileChange, activity };
}

const loose = shapes(z.object);
const strict = shapes(strictFactory);

const resumeStateSchema: z.ZodType<ResumeState> = z.strictObject({
  session_id: z.string().default(''),
  messages: z.array(strict.message).optional(),
  activities: z.array(strict.activity).optional(),
  title: z.string().optional(),
  model: z.string().optional(),
  started_at: z.string().optional(),
  revision: z.int().min(0).default(0),
  window: z.int().min(0).optional(),
  truncated: z.boolean().optional(),
});

/**
 * Strict decoder of edge_agent_v1 requests on the edge. The nested request takes internal
 * actions too; apply validateRpcEnvelope to the result.
 */
export const edgeAgentRpcRequestSchema: z.ZodType<EdgeAgentRPCRequest> = z.strictObject({
  version: z.int().min(0),
  actor_id: z.string(),
  request: anyActionRequestSchema,
  project_root: z.string().optional(),
  resume: resumeStateSchema.optional(),
  reset_revision: z.int().min(0).optional(),
  dispatch_id: z.string().regex(CLIENT_OPERATION_ID_PATTERN).optional(),
});

// ---------------------------------------------------------------------------------------------
// edge_agent results.

/**
 * A status outside the allow-list becomes `unavailable` (reference §2.1: the Manager does the
 * same), so the decoded type is honest; callers need no second check.
 */
const statusSchema = z.string().transform((s): EdgeAgentStatus => (isEdgeAgentStatus(s) ? s : 'unavailable'));

const resultInstallationSchema: z.ZodType<Installation> = z.object({
  id: z.string().default(''),
  kind: z.string().default(''),
  path: z.string().optional(),
  source: z.string().optional(),
});

/**
 * Decoder of edge replies (and of the snapshots stored from them). Tolerant: unknown fields are
 * dropped rather than refused, so an edge newer than the router still gets through; only
 * `version` and `status` are required. The caller still checks `version`.
 */
const resultShape = {
  version: z.number(),
  status: statusSchema,
  installations: z.array(resultInstallationSchema).optional(),
  default_project: z.string().optional(),
  session_id: z.string().optional(),
  running: z.boolean().optional(),
  closed: z.boolean().optional(),
  messages: z.array(loose.message).optional(),
  truncated: z.boolean().optional(),
  thread_id: z.string().optional(),
  model: z.string().optional(),
  project: z.string().optional(),
  started_at: z.string().optional(),
  skills: z
    .array(
      z.object({
        id: z.string().default(''),
        name: z.string().optional(),
        description: z.string().optional(),
      }),
    )
    .optional(),
  skills_available: z.boolean().optional(),
  agent_version: z.string().optional(),
  revision: z.number().optional(),
  activities: z.array(loose.activity).optional(),
  directory: z.string().optional(),
  parent_directory: z.string().optional(),
  directories: z.array(z.object({ name: z.string().default(''), path: z.string().default('') })).optional(),
  directory_roots: z.array(z.string()).optional(),
  sessions: z
    .array(
      z.object({
        session_id: z.string().default(''),
        thread_id: z.string().optional(),
        title: z.string().optional(),
        project: z.string().optional(),
        updated_at: z.string().optional(),
        running: z.boolean().optional(),
        closed: z.boolean().optional(),
        status: z.string().optional(),
      }),
    )
    .optional(),
  sessions_available: z.boolean().optional(),
  models: z.array(z.object({ id: z.string().default(''), name: z.string().optional() })).optional(),
  models_available: z.boolean().optional(),
  title: z.string().optional(),
  session_management: z.boolean().optional(),
  history_persistent: z.boolean().optional(),
  archived: z.boolean().optional(),
  history_total: z.number().optional(),
  approvals: z
    .array(
      z.object({
        id: z.string().default(''),
        command: z.string().optional(),
        directory: z.string().optional(),
        reason: z.string().optional(),
        kind: z.string().optional(),
        changes: z.array(loose.fileChange).optional(),
      }),
    )
    .optional(),
  permissions_available: z.boolean().optional(),
  permission_mode: z.string().optional(),
  input_requests: z
    .array(
      z.object({
        id: z.string().default(''),
        questions: z
          .array(
            z.object({
              id: z.string().default(''),
              header: z.string().optional(),
              question: z.string().optional(),
              is_other: z.boolean().optional(),
              is_secret: z.boolean().optional(),
              options: z
                .array(z.object({ label: z.string().default(''), description: z.string().optional() }))
                .optional(),
            }),
          )
          .optional(),
        blocking: z.boolean().optional(),
      }),
    )
    .optional(),
  window: z.number().optional(),
  history_windowing: z.boolean().optional(),
  files_available: z.boolean().optional(),
  files: z.array(loose.agentFile).optional(),
  file: loose.agentFile.optional(),
  transfer_id: z.string().optional(),
  file_data: z.string().optional(),
  file_offset: z.number().optional(),
  file_done: z.boolean().optional(),
  files_upload_available: z.boolean().optional(),
  turn_timing: z
    .object({
      dispatch_ms: z.number().nullable().optional(),
      first_reply_ms: z.number().nullable().optional(),
      finished_ms: z.number().nullable().optional(),
    })
    .optional(),
  request_service_ms: z.number().nullable().optional(),
  operation: z.lazy(() => operationOutcomeSchema).optional(),
};

/** An edge_agent result as HTTP clients get it (and as the OpenAPI document describes it). */
export const edgeAgentResultSchema: z.ZodType<EdgeAgentResult> = z.object(resultShape);

/**
 * What an edge answers the router: the same, plus the dispatch record of `dispatch_status` and of
 * a send that repeated a dispatch id. The router keeps `dispatch` to itself.
 */
export const edgeRpcResultSchema: z.ZodType<EdgeAgentResult> = z.object({
  ...resultShape,
  dispatch: z
    .object({
      state: z.enum(['accepted', 'rejected', 'absent']),
      status: statusSchema.optional(),
      item_id: z.string().min(1).max(INTERNAL_ID_MAX_LENGTH).optional(),
    })
    .optional(),
});

// ---------------------------------------------------------------------------------------------
// Internal messages: strict and bounded.

const actorIdSchema = z.string().min(1).max(ACTOR_ID_MAX_LENGTH);
const internalIdSchema = z.string().min(1).max(INTERNAL_ID_MAX_LENGTH);
/** Inside Tether an edge id is a canonical non-zero decimal string (one edge, one subject). */
const edgeIdSchema = z.string().refine(isEdgeId, 'edge_id must be a non-zero canonical decimal uint64');
const edgeTokenSchema = z.string().min(1).max(EDGE_TOKEN_MAX_LENGTH);
const nameSchema = z.string().min(1).max(NAME_MAX_LENGTH);
const deviceSchema = z.string().max(DEVICE_MAX_LENGTH);
const agentKindSchema = z.string().min(1).max(AGENT_KIND_MAX_LENGTH);
const projectSchema = z.string().min(1).max(PROJECT_MAX_BYTES);
const countSchema = z.int().min(0);
/** Milliseconds since the epoch. */
const timestampSchema = z.number().min(0);

const heartbeatInstallationSchema: z.ZodType<Installation> = z.strictObject({
  id: z.string().min(1).max(INSTALLATION_ID_MAX_BYTES),
  kind: agentKindSchema,
  path: z.string().max(FILE_PATH_MAX_BYTES).optional(),
  source: z.string().max(INSTALLATION_SOURCE_MAX_LENGTH).optional(),
});

export const heartbeatSchema: z.ZodType<EdgeHeartbeat> = z.strictObject({
  edge_id: edgeIdSchema,
  edge_token: edgeTokenSchema,
  device: deviceSchema,
  agent_kinds: z.array(agentKindSchema).max(AGENT_KINDS_MAX),
  installations: z.array(heartbeatInstallationSchema).max(HEARTBEAT_INSTALLATIONS_MAX),
  live_sessions: countSchema,
  max_sessions: countSchema,
  sent_at: timestampSchema,
  interval_ms: z
    .number()
    .int()
    .min(EDGE_HEARTBEAT_INTERVAL_MIN_MS)
    .max(EDGE_HEARTBEAT_INTERVAL_MAX_MS)
    .optional(),
  leaving: z.boolean().optional(),
});

export const journalEntrySchema: z.ZodType<JournalEntry> = z.strictObject({
  v: z.literal(1),
  session_id: internalIdSchema,
  edge_id: edgeIdSchema,
  actor_id: actorIdSchema,
  access_id: internalIdSchema.optional(),
  epoch: z.string().min(1).max(EPOCH_MAX_LENGTH),
  revision: countSchema,
  sequence: z.int().min(1).optional(),
  prev_stream_seq: countSchema.optional(),
  snapshot: edgeAgentResultSchema,
  emitted_at: timestampSchema,
  recorded_at: timestampSchema,
  fence: z.int().min(0).optional(),
});

const submissionSchema: z.ZodType<Submission> = z.strictObject({
  client_message_id: z.string().regex(CLIENT_OPERATION_ID_PATTERN),
  fence: z.int().min(0),
  payload_fingerprint: z.string().regex(PAYLOAD_FINGERPRINT_PATTERN),
  dispatch_state: z.enum(DISPATCH_STATES),
  reason: z.string().min(1).max(SUBMISSION_REASON_MAX_LENGTH).optional(),
  item_id: z.string().min(1).max(INTERNAL_ID_MAX_LENGTH).optional(),
  submitted_at: timestampSchema,
  resolved_at: timestampSchema.optional(),
});

/** A router-written submission row on a journal subject (strict, like every internal message). */
export const journalSubmissionEntrySchema: z.ZodType<JournalSubmissionEntry> = z.strictObject({
  v: z.literal(1),
  kind: z.literal('submission'),
  session_id: internalIdSchema,
  edge_id: edgeIdSchema,
  actor_id: actorIdSchema,
  access_id: internalIdSchema.optional(),
  epoch: z.string().min(1).max(EPOCH_MAX_LENGTH),
  revision: countSchema,
  sequence: z.int().min(1),
  prev_stream_seq: countSchema,
  fence: z.int().min(0),
  submission: submissionSchema,
  recorded_at: timestampSchema,
});

/** Base64 of a sealed snapshot; bounded like the largest snapshot an update may carry. */
const SEALED_SNAPSHOT_MAX_LENGTH = 8 * 1024 * 1024;

/** An edge update's row as JetStream stores it: the snapshot sealed (see `SealedJournalEntry`). */
export const sealedJournalEntrySchema: z.ZodType<SealedJournalEntry> = z.strictObject({
  v: z.literal(1),
  session_id: internalIdSchema,
  edge_id: edgeIdSchema,
  actor_id: actorIdSchema,
  access_id: internalIdSchema.optional(),
  epoch: z.string().min(1).max(EPOCH_MAX_LENGTH),
  revision: countSchema,
  sequence: z.int().min(1).optional(),
  prev_stream_seq: countSchema.optional(),
  sealed_snapshot: z.string().min(1).max(SEALED_SNAPSHOT_MAX_LENGTH),
  emitted_at: timestampSchema,
  recorded_at: timestampSchema,
  fence: z.int().min(0).optional(),
});

/** Anything on a journal subject as stored: a sealed edge update's row or a submission row. */
export const journalMessageSchema: z.ZodType<JournalWireMessage> = z.union([
  journalSubmissionEntrySchema,
  sealedJournalEntrySchema,
]);

const resolutionSchema: z.ZodType<PromptResolution> = z.object({
  resolved: z.boolean(),
  selected_option_id: z.string().nullable(),
  resolved_by: z.string().nullable(),
  resolved_at: z.number().nullable(),
});

/** The `operation` of a reply (tolerant like every result decoder). */
const operationOutcomeSchema: z.ZodType<OperationOutcome> = z.object({
  client_operation_id: z.string(),
  replayed: z.boolean(),
  fence: z.number(),
  submission: z
    .object({
      client_message_id: z.string(),
      fence: z.number(),
      payload_fingerprint: z.string(),
      dispatch_state: z.enum(DISPATCH_STATES),
      reason: z.string().optional(),
      item_id: z.string().optional(),
      submitted_at: z.number(),
      resolved_at: z.number().optional(),
    })
    .optional(),
  resolution: resolutionSchema.optional(),
  refusal: z
    .object({
      code: z.enum(OPERATION_REFUSAL_CODES),
      message: z.string(),
      current_fence: z.number().optional(),
      current_revision: z.number().optional(),
      resolution: resolutionSchema.optional(),
    })
    .optional(),
});

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

const accessInputSchema: z.ZodType<AccessInput> = z.strictObject({
  name: nameSchema,
  kind: agentKindSchema,
  edge_id: edgeIdSchema,
  installation_id: z.string().min(1).max(INSTALLATION_ID_MAX_BYTES),
  project: projectSchema,
});

/** The key of a stored session: every part is an id the edge_agent rules already bound. */
const opaqueIdSchema = z.string().refine(isOpaqueId, 'must be a 32-character id of [A-Za-z0-9_-]');
const sessionScopeShape = {
  actor_id: actorIdSchema,
  access_id: opaqueIdSchema,
  edge_id: edgeIdSchema,
  session_id: opaqueIdSchema,
};
const sessionScopeSchema: z.ZodType<HistorySessionScope> = z.strictObject(sessionScopeShape);
/** A title override: 1 to 120 runes, not blank, no control characters (reference §2.2 rename). */
const titleOverrideSchema = z
  .string()
  .refine((t) => t.trim() !== '', 'title must not be blank')
  .refine((t) => [...t].length <= TITLE_MAX_RUNES, `title exceeds ${TITLE_MAX_RUNES} characters`)
  .refine((t) => !hasControlChars(t), 'title must not contain control characters');

const journalCursorSchema = z.strictObject({
  epoch: z.string().min(1).max(EPOCH_MAX_LENGTH),
  sequence: z.int().min(0),
});
const journalPageSchema: z.ZodType<HistoryJournalPageRequest> = z.strictObject({
  ...sessionScopeShape,
  direction: z.enum(JOURNAL_DIRECTIONS),
  cursor: journalCursorSchema.optional(),
  limit: z.int().min(1).max(JOURNAL_PAGE_MAX_LIMIT).optional(),
});

/** A record is ids and an outcome only; any free text field would be a leak, so none exists. */
/** An id as a refused call's body held it: anything storable (docs/security.md "Audit"). */
const auditIdSchema = z.string().refine((id) => isStorableId(id, AUDIT_ID_MAX_LENGTH), 'id is not storable');

export const auditRecordSchema: z.ZodType<AuditRecord> = z.strictObject({
  v: z.literal(1),
  id: z.string().regex(/^[0-9a-f]{32}$/),
  actor_id: actorIdSchema.refine((id) => isStorableId(id, ACTOR_ID_MAX_LENGTH), 'actor_id is not storable'),
  action: z.union([z.enum(EDGE_AGENT_ACTIONS), z.literal(AUDIT_UNDECODED_ACTION)]),
  edge_id: z.union([z.literal(''), auditIdSchema]),
  access_id: auditIdSchema.optional(),
  session_id: auditIdSchema.optional(),
  status: z
    .string()
    .max(AUDIT_STATUS_MAX_LENGTH)
    .regex(/^[a-z0-9_]+$/),
  success: z.boolean(),
  trace_id: z
    .string()
    .regex(/^[0-9a-f]{32}$/)
    .optional(),
  occurred_at: timestampSchema,
});

/** One strict schema per internal request subject. */
export const requestSchemas: { [K in RequestName]: z.ZodType<RequestOf<K>> } = {
  // The api has validated the request already; the router checks it again because it trusts
  // no payload, and the rules bound every field of it.
  routerEdgeAgent: z.strictObject({
    actor_id: actorIdSchema,
    request: refineWith(edgeAgentRequestSchema, validateEdgeAgentRequest),
    project_root: projectSchema.optional(),
  }),
  routerPresence: z.strictObject({
    edge_ids: z.array(edgeIdSchema).max(CONNECTORS_LIST_MAX),
  }),
  routerSessionUpdate: z.strictObject({
    edge_id: edgeIdSchema,
    edge_token: edgeTokenSchema,
    actor_id: actorIdSchema,
    access_id: internalIdSchema.optional(),
    session_id: internalIdSchema,
    revision: countSchema,
    snapshot: edgeAgentResultSchema,
    emitted_at: timestampSchema,
  }),
  historyAuthorize: z.strictObject({
    actor_id: actorIdSchema,
    edge_id: edgeIdSchema,
    access_id: internalIdSchema.optional(),
  }),
  historyAccessList: z.strictObject({
    actor_id: actorIdSchema,
    page: z.int().min(1),
    page_size: z.int().min(1).max(ACCESSES_PAGE_SIZE_MAX),
  }),
  historyAccessCreate: z.strictObject({
    actor_id: actorIdSchema,
    access: accessInputSchema,
  }),
  historyAccessUpdate: z.strictObject({
    actor_id: actorIdSchema,
    id: internalIdSchema,
    access: accessInputSchema,
  }),
  historyAccessDelete: z.strictObject({
    actor_id: actorIdSchema,
    id: internalIdSchema,
  }),
  historyConnectorList: z.strictObject({
    actor_id: actorIdSchema,
    after: edgeIdSchema.optional(),
    limit: z.int().min(1).max(CONNECTORS_LIST_MAX).optional(),
  }),
  historyConnectorEnroll: z.strictObject({
    actor_id: actorIdSchema,
    name: nameSchema,
    device: deviceSchema.optional(),
  }),
  historyConnectorRotate: z.strictObject({ actor_id: actorIdSchema, edge_id: edgeIdSchema }),
  historyConnectorDelete: z.strictObject({ actor_id: actorIdSchema, edge_id: edgeIdSchema }),
  historyEdgeCredential: z.strictObject({ edge_id: edgeIdSchema }),
  historySessions: z.strictObject({
    actor_id: actorIdSchema,
    access_id: internalIdSchema,
    edge_id: edgeIdSchema,
    page: z.int().min(1).max(HISTORY_PAGE_MAX),
  }),
  historyResumeSeed: sessionScopeSchema,
  historySnapshot: sessionScopeSchema,
  historyArchiveWindow: z.strictObject({ ...sessionScopeShape, snapshot: edgeAgentResultSchema }),
  historyRename: z.strictObject({ ...sessionScopeShape, title: titleOverrideSchema }),
  historyDelete: sessionScopeSchema,
  historyTranscript: z.strictObject({ ...sessionScopeShape, before: countSchema.optional() }),
  historyJournalPage: journalPageSchema,
  historyOpenSubmissions: z.strictObject({
    dispatch_state: z.enum(['pending', 'unknown']),
    submitted_from: timestampSchema.optional(),
    submitted_before: timestampSchema.optional(),
    after: z
      .strictObject({
        submitted_at: timestampSchema,
        session_id: opaqueIdSchema,
        client_message_id: z.string().regex(CLIENT_OPERATION_ID_PATTERN),
      })
      .optional(),
    limit: z.int().min(1).max(JOURNAL_PAGE_MAX_LIMIT),
  }),
};
