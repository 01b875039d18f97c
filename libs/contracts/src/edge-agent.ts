// Wire types of the liaison `edge_agent.proto` (docs/architecture.md), field for field.
// JSON names are the proto field names. On the wire, empty fields are omitted and a missing
// boolean means false (see wire.ts); the optional markers below say what may be omitted.
// `turn_timing` values are nullable: a missing value means "not observed", 0 is a real value.
// `bytes` fields travel as base64 strings.
import type { OperationOutcome } from './operations.js';

export const EDGE_AGENT_RPC_NAME = 'edge_agent_v1';
export const EDGE_AGENT_RPC_VERSION = 1;

// The action lists and their types are derived from the action table (actions.ts).
export {
  EDGE_AGENT_ACTIONS,
  EDGE_AGENT_INTERNAL_ACTIONS,
  FILE_ACTIONS,
  type EdgeAgentAction,
  type EdgeAgentAnyAction,
  type EdgeAgentInternalAction,
  type FileAction,
} from './actions.js';
import type { EdgeAgentAnyAction } from './actions.js';

/**
 * Every status an edge or the router may answer with. `resume_unavailable` is missing from the
 * proto comment but emitted by the reference (reference §9.1); `output_limit` is accepted but
 * never emitted (§9.2).
 */
export const EDGE_AGENT_STATUSES = [
  'ok',
  'busy',
  'unavailable',
  'upgrade_required',
  'not_found',
  'unsupported_user',
  'launch_failed',
  'external_tools',
  'authentication_required',
  'session_closed',
  'turn_failed',
  'approval_declined',
  'output_limit',
  'expired',
  'invalid_request',
  'resume_unavailable',
] as const;
export type EdgeAgentStatus = (typeof EDGE_AGENT_STATUSES)[number];
const STATUS_SET: ReadonlySet<string> = new Set(EDGE_AGENT_STATUSES);
export function isEdgeAgentStatus(value: unknown): value is EdgeAgentStatus {
  return typeof value === 'string' && STATUS_SET.has(value);
}

export const PERMISSION_MODES = ['read-only', 'workspace-write'] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];
export const APPROVAL_DECISIONS = ['accept', 'decline'] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

export interface InputAnswer {
  question_id: string;
  answers: string[];
}

export interface AgentFileOperation {
  path?: string;
  name?: string;
  transfer_id?: string;
  offset?: number;
  size?: number;
  /** base64 */
  data?: string;
}

export interface EdgeAgentRequest {
  /** uint64 as a decimal string or a number; Tether keeps it as a decimal string inside. */
  edge_id: string;
  action: EdgeAgentAnyAction;
  installation_id?: string;
  project?: string;
  session_id?: string;
  text?: string;
  skill_id?: string;
  access_id?: string;
  directory?: string;
  working_directory?: string;
  cursor?: string;
  model?: string;
  title?: string;
  history_page?: string;
  approval_id?: string;
  decision?: string;
  permission_mode?: string;
  input_id?: string;
  answers?: InputAnswer[];
  history_before?: string;
  file?: AgentFileOperation;
  attachments?: string[];
  /**
   * The mutation envelope (operations.ts; send, interrupt, approve, answer, model, permissions):
   * optional and additive. `client_operation_id` and `payload_fingerprint` come together.
   */
  client_operation_id?: string;
  /** Positive integer: the runtime fence the client last saw; a different one is refused. */
  expected_runtime_fence?: number;
  payload_fingerprint?: string;
  /** approve, answer: the prompt revision the client answers (1 while pending). */
  expected_revision?: number;
  /**
   * send with the envelope: dispatch again a send whose durable submission is `unknown` (never
   * anything else). A control flag, not payload: the fingerprint does not cover it.
   */
  retry_unknown?: boolean;
}

export interface AgentFile {
  name?: string;
  path?: string;
  size?: number;
  directory?: boolean;
  media_type?: string;
}

export interface Message {
  role: string;
  text?: string;
  attachments?: AgentFile[];
}

export interface FileChange {
  path?: string;
  kind?: string;
  diff?: string;
  move_path?: string;
}

export interface Activity {
  id: string;
  kind: string;
  status?: string;
  message_index?: number;
  duration_ms?: number;
  command?: string;
  directory?: string;
  output?: string;
  exit_code?: number | null;
  changes?: FileChange[];
  truncated?: boolean;
}

export interface ResumeState {
  session_id: string;
  messages?: Message[];
  activities?: Activity[];
  title?: string;
  model?: string;
  started_at?: string;
  revision: number;
  window?: number;
  truncated?: boolean;
}

export interface EdgeAgentRPCRequest {
  version: number;
  /** The authenticated user (JWT `sub`), injected by the api, never read from a client. */
  actor_id: string;
  request: EdgeAgentRequest;
  /** The saved access's project, injected by the api. */
  project_root?: string;
  /** Display state from history, injected for `resume` only. */
  resume?: ResumeState;
  /** `send` only: the router confirms the previous display window is archived. */
  reset_revision?: number;
  /**
   * An action with the mutation envelope, and `dispatch_status`: the client_operation_id. The
   * edge keeps what became of each dispatch id, answers a second call of it with that instead of
   * running it again, and tells the reconciler about a send (EdgeDispatchRecord).
   */
  dispatch_id?: string;
}

/** What an edge did with one dispatch id (reference orca §4 "strong match" by client id). */
export interface EdgeDispatchRecord {
  /** `absent`: this edge process holds no record of it, which proves nothing. */
  state: 'accepted' | 'rejected' | 'absent';
  /** rejected: the status the edge answered. */
  status?: EdgeAgentStatus;
  /** accepted: the journal item of the user message, `m:<window>:<index>`, when it could be named. */
  item_id?: string;
}

export interface Installation {
  id: string;
  kind: string;
  path?: string;
  source?: string;
}

export interface Skill {
  id: string;
  name?: string;
  description?: string;
}

export interface Directory {
  name: string;
  path: string;
}

export interface SessionSummary {
  session_id: string;
  thread_id?: string;
  title?: string;
  project?: string;
  updated_at?: string;
  running?: boolean;
  closed?: boolean;
  status?: string;
}

export interface AgentModel {
  id: string;
  name?: string;
}

export interface Approval {
  id: string;
  command?: string;
  directory?: string;
  reason?: string;
  kind?: string;
  changes?: FileChange[];
}

export interface InputOption {
  label: string;
  description?: string;
}

export interface InputQuestion {
  id: string;
  header?: string;
  question?: string;
  is_other?: boolean;
  is_secret?: boolean;
  options?: InputOption[];
}

export interface InputRequest {
  id: string;
  questions?: InputQuestion[];
  blocking?: boolean;
}

/** Edge-local monotonic durations of the last turn. Missing = not observed; 0 is real. */
export interface AgentTurnTiming {
  dispatch_ms?: number | null;
  first_reply_ms?: number | null;
  finished_ms?: number | null;
}

export interface EdgeAgentResult {
  version: number;
  status: EdgeAgentStatus;
  installations?: Installation[];
  default_project?: string;
  session_id?: string;
  running?: boolean;
  closed?: boolean;
  messages?: Message[];
  truncated?: boolean;
  thread_id?: string;
  model?: string;
  project?: string;
  started_at?: string;
  skills?: Skill[];
  skills_available?: boolean;
  agent_version?: string;
  revision?: number;
  activities?: Activity[];
  directory?: string;
  parent_directory?: string;
  directories?: Directory[];
  directory_roots?: string[];
  sessions?: SessionSummary[];
  sessions_available?: boolean;
  models?: AgentModel[];
  models_available?: boolean;
  title?: string;
  session_management?: boolean;
  history_persistent?: boolean;
  archived?: boolean;
  history_total?: number;
  approvals?: Approval[];
  permissions_available?: boolean;
  permission_mode?: string;
  input_requests?: InputRequest[];
  window?: number;
  history_windowing?: boolean;
  files_available?: boolean;
  files?: AgentFile[];
  file?: AgentFile;
  transfer_id?: string;
  /** base64 */
  file_data?: string;
  file_offset?: number;
  file_done?: boolean;
  files_upload_available?: boolean;
  turn_timing?: AgentTurnTiming;
  request_service_ms?: number | null;
  /** Only in replies to requests that carried the mutation envelope (operations.ts). */
  operation?: OperationOutcome;
  /** Only in an edge's reply to `dispatch_status`. */
  dispatch?: EdgeDispatchRecord;
}

/** GET/POST/PUT /api/v1/agent-accesses. */
export interface AgentAccess {
  id: string;
  name: string;
  kind: string;
  edge_id: string;
  installation_id: string;
  project: string;
}

/** GET /api/v1/edge-agents/connectors item (reference §2.1). */
export interface AgentConnector {
  id: string;
  name: string;
  online: boolean;
  device?: string;
}

export function result(status: EdgeAgentStatus, fields: Partial<EdgeAgentResult> = {}): EdgeAgentResult {
  return { version: EDGE_AGENT_RPC_VERSION, ...fields, status };
}
