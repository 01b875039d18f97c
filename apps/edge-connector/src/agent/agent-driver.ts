// The seam between the edge's session manager and an agent. A driver turns one native agent
// protocol (Codex app-server JSON-RPC, or the deterministic scripted agent) into the neutral
// events below; the session manager owns all display state, bounds, approvals views, timing and
// revisions, so every driver gets the same behaviour for free.
import type { AgentModel, InputQuestion, Installation, PermissionMode } from '#contracts';

export interface DiscoveryResult {
  installations: Installation[];
  /** Discovery stopped at a bound before looking everywhere. */
  truncated: boolean;
}

export interface DriverCapabilities {
  models: boolean;
  skills: boolean;
  permissions: boolean;
  approvals: boolean;
  input: boolean;
  attachments: boolean;
  resume: boolean;
}

/** Every capability on: a driver that serves the whole contract (Codex, the scripted agent). */
export const ALL_CAPABILITIES: Readonly<DriverCapabilities> = {
  models: true,
  skills: true,
  permissions: true,
  approvals: true,
  input: true,
  attachments: true,
  resume: true,
};

export interface OpenSessionOptions {
  installation: Installation;
  /** Absolute, symlink-resolved session directory; the agent process runs here. */
  cwd: string;
  /** Present to resume an existing native thread. */
  threadId?: string;
  /** Saved-access session (activity details, approvals and inputs are allowed). */
  saved: boolean;
  /** Receives every event of this session, in native order. Must not throw. */
  onEvent: (event: AgentEvent) => void;
}

export interface SkillInfo {
  name: string;
  description?: string;
  /** Absolute path on the edge; never leaves the edge. */
  path: string;
}

export interface TurnInput {
  text: string;
  permissionMode: PermissionMode;
  model?: string;
  skill?: SkillInfo;
  /** Absolute paths of private image snapshots. */
  images?: string[];
}

export type ApprovalResponse = 'accept' | 'decline';

export interface AgentSession {
  readonly threadId: string;
  readonly model?: string;
  readonly title?: string;
  readonly agentVersion?: string;
  readonly capabilities: DriverCapabilities;
  /** Resolves once the native side accepted the turn (this is `dispatch_ms`). */
  startTurn(input: TurnInput): Promise<{ turnId: string }>;
  interrupt(turnId: string): Promise<void>;
  respondApproval(nativeId: string | number, response: ApprovalResponse): Promise<void>;
  respondInput(nativeId: string | number, answers: Record<string, string[]>): Promise<void>;
  listModels(): Promise<AgentModel[]>;
  listSkills(): Promise<SkillInfo[]>;
  /** Ends the native session and its process; idempotent. */
  close(): Promise<void>;
}

export interface AgentDriver {
  readonly kind: string;
  /** The agent kinds the edge announces in its heartbeat; `[kind]` when absent (one driver). */
  readonly kinds?: readonly string[];
  discover(): Promise<DiscoveryResult>;
  /** Launches (or resumes) one session; throws a DriverError with a contract status on failure. */
  open(options: OpenSessionOptions): Promise<AgentSession>;
  /** Ends what the driver keeps beside sessions (spare processes); called once at edge shutdown. */
  close?(): Promise<void>;
}

/** A native activity as the driver sees it; the session manager projects and bounds it. */
export interface NativeActivity {
  /** The native item id (≤256 characters); the edge hashes it into the public id. */
  nativeId: string;
  kind: string;
  status: 'running' | 'completed' | 'failed' | 'declined' | 'ended';
  command?: string;
  cwd?: string;
  /** Replaces any streamed output (Codex `aggregatedOutput`). */
  output?: string;
  exitCode?: number | null;
  durationMs?: number;
  changes?: { path: string; kind: string; diff?: string; movePath?: string }[];
}

export type AgentEvent =
  | { type: 'message_delta'; turnId: string; itemId: string; text: string }
  | { type: 'activity'; turnId: string; activity: NativeActivity }
  | { type: 'output_delta'; turnId: string; nativeId: string; text: string }
  | { type: 'turn_diff'; turnId: string; diff: string }
  | { type: 'plan_delta'; turnId: string; nativeId: string; text: string }
  | {
      type: 'approval_request';
      turnId: string;
      nativeId: string | number;
      kind: 'command' | 'file_change';
      itemId?: string;
      command?: string;
      cwd?: string;
      reason?: string;
    }
  | {
      type: 'input_request';
      turnId: string;
      nativeId: string | number;
      itemId: string;
      questions: InputQuestion[];
    }
  | { type: 'request_resolved'; nativeId: string | number }
  | { type: 'title'; title: string }
  | { type: 'turn_completed'; turnId: string; status: 'completed' | 'failed' | 'interrupted' }
  /** The native process or stream ended; the session closes with `session_closed`. */
  | { type: 'closed'; reason: string };

/** A driver failure that maps to one contract status. */
export class DriverError extends Error {
  constructor(
    readonly status:
      | 'launch_failed'
      | 'authentication_required'
      | 'external_tools'
      | 'unsupported_user'
      | 'resume_unavailable'
      | 'busy'
      | 'unavailable'
      | 'invalid_request'
      | 'upgrade_required'
      | 'session_closed',
    message: string,
  ) {
    super(message);
    this.name = 'DriverError';
  }
}
