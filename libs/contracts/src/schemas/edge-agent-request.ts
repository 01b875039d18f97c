// Decoders of edge_agent requests: the HTTP body, and the edge_agent_v1 RPC the router sends an edge.
import { z } from 'zod';
import {
  EDGE_AGENT_ACTIONS,
  EDGE_AGENT_INTERNAL_ACTIONS,
  type AgentFileOperation,
  type EdgeAgentAnyAction,
  type EdgeAgentRequest,
  type EdgeAgentRPCRequest,
  type InputAnswer,
  type ResumeState,
} from '../edge-agent.js';
import { FILE_CHUNK_MAX_BYTES } from '../limits.js';
import { CLIENT_OPERATION_ID_PATTERN } from '../operations.js';
import { base64DecodedLength, normalizeDecimalUint64 } from '../validation/predicates.js';
import { strict } from './agent-shapes.js';

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
