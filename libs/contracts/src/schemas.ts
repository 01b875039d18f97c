// Runtime decoders of every message that crosses a boundary (HTTP body, NATS payload, JetStream
// message), one module per concern under schemas/. They check types and shapes; the rules of
// reference §2.2 live in validation.ts and are applied to the decoded request by
// validateEdgeAgentRequest / validateRpcEnvelope.
export { edgeAgentRequestSchema, edgeAgentRpcRequestSchema } from './schemas/edge-agent-request.js';
export { edgeAgentResultSchema, edgeRpcResultSchema } from './schemas/edge-agent-result.js';
export {
  heartbeatSchema,
  journalEntrySchema,
  journalSubmissionEntrySchema,
  journalMessageSchema,
  sealedJournalEntrySchema,
} from './schemas/journal.js';
export {
  lifecycleEventSchema,
  publishedLifecycleEventSchema,
  tolerantLifecycleEventSchema,
} from './schemas/lifecycle.js';
export { auditRecordSchema, requestSchemas } from './schemas/internal-requests.js';
export { validateEdgeAgentRequest, validateRpcEnvelope } from './validation.js';
export type { ValidationResult } from './validation.js';
