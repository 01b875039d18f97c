// The rules every edge_agent request obeys (reference §2.2), run by the api on the HTTP body and
// again by the edge on the RPC. The zod schemas (schemas.ts) only check types; everything that
// is a rule lives under validation/, as plain loops: this runs on every poll/watch/send.
// Reasons are short and fixed: they never echo what the client sent.
export {
  UINT64_MAX_DECIMAL,
  INT63_MAX_DECIMAL,
  isDecimalUint64,
  normalizeDecimalUint64,
  isEdgeId,
  isOpaqueId,
  exceedsBytes,
  hasControlChars,
  isStorableId,
  isValidUtf8,
  base64DecodedLength,
} from './validation/predicates.js';
export {
  validateEdgeAgentRequest,
  validateRpcEnvelope,
  type ValidationResult,
} from './validation/request-rules.js';
