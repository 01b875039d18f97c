// Tolerant decoders of edge replies and of the operation outcome they carry.
import { z } from 'zod';
import {
  isEdgeAgentStatus,
  type EdgeAgentResult,
  type EdgeAgentStatus,
  type Installation,
} from '../edge-agent.js';
import { INTERNAL_ID_MAX_LENGTH } from '../limits.js';
import {
  DISPATCH_STATES,
  OPERATION_REFUSAL_CODES,
  type OperationOutcome,
  type PromptResolution,
} from '../operations.js';
import { loose } from './agent-shapes.js';

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
