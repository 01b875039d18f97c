// One strict schema per internal request subject (router and history RPCs) and the audit record.
import { z } from 'zod';
import { EDGE_AGENT_ACTIONS } from '../edge-agent.js';
import {
  AUDIT_ID_MAX_LENGTH,
  AUDIT_UNDECODED_ACTION,
  type AccessInput,
  type AuditRecord,
  JOURNAL_DIRECTIONS,
  type HistoryJournalPageRequest,
  type HistorySessionScope,
} from '../internal.js';
import {
  ACCESSES_PAGE_SIZE_MAX,
  ACTOR_ID_MAX_LENGTH,
  CONNECTORS_LIST_MAX,
  EPOCH_MAX_LENGTH,
  HISTORY_PAGE_MAX,
  INSTALLATION_ID_MAX_BYTES,
  TITLE_MAX_RUNES,
  AUDIT_STATUS_MAX_LENGTH,
  JOURNAL_PAGE_MAX_LIMIT,
} from '../limits.js';
import { CLIENT_OPERATION_ID_PATTERN } from '../operations.js';
import type { RequestName, RequestOf } from '../subjects.js';
import { hasControlChars, isStorableId } from '../validation/predicates.js';
import { validateEdgeAgentRequest, type ValidationResult } from '../validation/request-rules.js';
import {
  actorIdSchema,
  internalIdSchema,
  edgeIdSchema,
  edgeTokenSchema,
  nameSchema,
  deviceSchema,
  agentKindSchema,
  projectSchema,
  countSchema,
  timestampSchema,
  opaqueIdSchema,
} from './internal-fields.js';
import { edgeAgentRequestSchema } from './edge-agent-request.js';
import { edgeAgentResultSchema } from './edge-agent-result.js';

function refineWith<T>(schema: z.ZodType<T>, validate: (value: T) => ValidationResult): z.ZodType<T> {
  return schema.superRefine((value, ctx) => {
    const verdict = validate(value);
    if (!verdict.ok) ctx.addIssue({ code: 'custom', message: verdict.reason });
  });
}

const accessInputSchema: z.ZodType<AccessInput> = z.strictObject({
  name: nameSchema,
  kind: agentKindSchema,
  edge_id: edgeIdSchema,
  installation_id: z.string().min(1).max(INSTALLATION_ID_MAX_BYTES),
  project: projectSchema,
});

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
  historyResumeSeed: z.strictObject({ ...sessionScopeShape, stream_sequence: countSchema.optional() }),
  historySnapshot: sessionScopeSchema,
  historyArchiveWindow: z.strictObject({ ...sessionScopeShape, snapshot: edgeAgentResultSchema }),
  historyRename: z.strictObject({ ...sessionScopeShape, title: titleOverrideSchema }),
  historyDelete: sessionScopeSchema,
  historyTranscript: z.strictObject({
    ...sessionScopeShape,
    before: countSchema.optional(),
    stream_sequence: countSchema.optional(),
  }),
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
