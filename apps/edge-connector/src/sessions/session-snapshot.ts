// The snapshot `poll` answers and every session update carries (reference §4), bounded to
// SNAPSHOT_MAX_BYTES. Pending cards are dropped once the session closed: nothing can answer them.
import {
  EDGE_AGENT_RPC_VERSION,
  type AgentModel,
  type EdgeAgentResult,
  type EdgeAgentStatus,
  type PermissionMode,
  type AgentTurnTiming,
} from '#contracts';
import type { AgentSession } from '../agent/agent-driver.js';
import { boundSnapshot } from './display.js';
import type { PendingPrompts } from './pending-prompts.js';
import type { SessionSkill } from './live-session.js';
import type { TranscriptWindow } from './transcript-window.js';

/** The session state a snapshot shows (LiveSession has it). */
export interface SnapshotSource {
  readonly id: string;
  readonly cwd: string;
  readonly saved: boolean;
  readonly agent: AgentSession | null;
  readonly status: EdgeAgentStatus;
  readonly running: boolean;
  readonly closed: boolean;
  readonly revision: number;
  readonly startedAt: number;
  readonly shownModel: string | undefined;
  readonly transcript: TranscriptWindow;
  readonly prompts: PendingPrompts;
  readonly skills: readonly SessionSkill[];
  readonly skillsAvailable: boolean;
  readonly models: AgentModel[] | null;
  readonly permissionMode: PermissionMode;
  readonly turnTiming: AgentTurnTiming | null;
  displayTitle(): string;
}

export function sessionSnapshot(session: SnapshotSource): EdgeAgentResult {
  const { agent, transcript, closed, saved, models } = session;
  const snapshot: EdgeAgentResult = {
    version: EDGE_AGENT_RPC_VERSION,
    status: session.status,
    session_id: session.id,
    thread_id: agent?.threadId,
    agent_version: agent?.agentVersion,
    model: session.shownModel,
    project: session.cwd,
    started_at: new Date(session.startedAt).toISOString(),
    running: session.running,
    closed,
    revision: session.revision,
    window: transcript.window,
    truncated: transcript.truncated,
    messages: transcript.views(),
    activities: transcript.activities.views(),
    title: session.displayTitle(),
    skills: session.skills.map((skill) => ({
      id: skill.id,
      name: skill.info.name,
      description: skill.info.description,
    })),
    skills_available: session.skillsAvailable,
    models: models ?? undefined,
    models_available: models !== null,
    approvals: closed ? [] : session.prompts.approvalViews(),
    permissions_available: Boolean(agent?.capabilities.permissions) && saved,
    permission_mode: session.permissionMode,
    input_requests: closed ? [] : session.prompts.inputViews(),
    turn_timing: session.turnTiming ? { ...session.turnTiming } : undefined,
    session_management: true,
    // Files and uploads are for saved sessions only (reference §4, §9.16).
    files_available: saved,
    files_upload_available: saved,
    history_windowing: saved,
  };
  return boundSnapshot(snapshot);
}
