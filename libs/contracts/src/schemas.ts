// PLACEHOLDER — being replaced by the real runtime schemas (strict zod decoders). The exported
// names and types are final; other code may import them already.
import { z } from 'zod';
import type { EdgeAgentRequest, EdgeAgentRPCRequest, EdgeAgentResult } from './edge-agent.js';
import type { EdgeHeartbeat, JournalEntry } from './internal.js';
import type { RequestName, RequestOf } from './subjects.js';

const anything = <T>() => z.custom<T>(() => true);

/** Strict decoder of the HTTP body of POST /api/v1/edge-agents (unknown fields refused). */
export const edgeAgentRequestSchema: z.ZodType<EdgeAgentRequest> = anything<EdgeAgentRequest>();
/** Strict decoder of edge_agent_v1 requests on the edge. */
export const edgeAgentRpcRequestSchema: z.ZodType<EdgeAgentRPCRequest> = anything<EdgeAgentRPCRequest>();
/** Decoder of edge replies on the router (status allow-list applied by the caller). */
export const edgeAgentResultSchema: z.ZodType<EdgeAgentResult> = anything<EdgeAgentResult>();
export const heartbeatSchema: z.ZodType<EdgeHeartbeat> = anything<EdgeHeartbeat>();
export const journalEntrySchema: z.ZodType<JournalEntry> = anything<JournalEntry>();
/** One schema per internal request subject. */
export const requestSchemas: { [K in RequestName]: z.ZodType<RequestOf<K>> } = {
  routerEdgeAgent: anything<RequestOf<'routerEdgeAgent'>>(),
  routerPresence: anything<RequestOf<'routerPresence'>>(),
  routerSessionUpdate: anything<RequestOf<'routerSessionUpdate'>>(),
  historyAuthorize: anything<RequestOf<'historyAuthorize'>>(),
  historyAccessList: anything<RequestOf<'historyAccessList'>>(),
  historyAccessCreate: anything<RequestOf<'historyAccessCreate'>>(),
  historyAccessUpdate: anything<RequestOf<'historyAccessUpdate'>>(),
  historyAccessDelete: anything<RequestOf<'historyAccessDelete'>>(),
  historyConnectorList: anything<RequestOf<'historyConnectorList'>>(),
  historyConnectorEnroll: anything<RequestOf<'historyConnectorEnroll'>>(),
  historySessions: anything<RequestOf<'historySessions'>>(),
};

export type ValidationResult = { ok: true } | { ok: false; reason: string };
/** The rules of reference §2.2 for one request (sizes, allowed fields, per-action shape). */
export function validateEdgeAgentRequest(_request: EdgeAgentRequest): ValidationResult {
  return { ok: true };
}
/** The edge's envelope checks (reference §2.2 "Edge-side envelope checks"). */
export function validateRpcEnvelope(_rpc: EdgeAgentRPCRequest): ValidationResult {
  return { ok: true };
}
