// Strict decoders of edge heartbeats and of the rows on a session's journal subject.
import { z } from 'zod';
import { type Installation } from '../edge-agent.js';
import {
  type EdgeHeartbeat,
  type JournalEntry,
  type JournalWireMessage,
  type SealedJournalEntry,
  type JournalSubmissionEntry,
} from '../internal.js';
import {
  AGENT_KINDS_MAX,
  EPOCH_MAX_LENGTH,
  FILE_PATH_MAX_BYTES,
  HEARTBEAT_INSTALLATIONS_MAX,
  EDGE_HEARTBEAT_INTERVAL_MAX_MS,
  EDGE_HEARTBEAT_INTERVAL_MIN_MS,
  INSTALLATION_ID_MAX_BYTES,
  INSTALLATION_SOURCE_MAX_LENGTH,
  INTERNAL_ID_MAX_LENGTH,
  SUBMISSION_REASON_MAX_LENGTH,
} from '../limits.js';
import {
  CLIENT_OPERATION_ID_PATTERN,
  DISPATCH_STATES,
  PAYLOAD_FINGERPRINT_PATTERN,
  type Submission,
} from '../operations.js';
import {
  actorIdSchema,
  internalIdSchema,
  edgeIdSchema,
  edgeTokenSchema,
  deviceSchema,
  agentKindSchema,
  countSchema,
  timestampSchema,
} from './internal-fields.js';
import { edgeAgentResultSchema } from './edge-agent-result.js';

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

/** What every row on a journal subject names: its session, edge, owner, access, epoch, revision. */
const journalRowHeader = {
  session_id: internalIdSchema,
  edge_id: edgeIdSchema,
  actor_id: actorIdSchema,
  access_id: internalIdSchema.optional(),
  epoch: z.string().min(1).max(EPOCH_MAX_LENGTH),
  revision: countSchema,
};

export const journalEntrySchema: z.ZodType<JournalEntry> = z.strictObject({
  v: z.literal(1),
  ...journalRowHeader,
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
  ...journalRowHeader,
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
  ...journalRowHeader,
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
