// `resume` on the edge (reference §2.3 resume): the checks of the history seed the router injects,
// and of the binding a saved session left behind, before the session manager relaunches the
// native thread. Pure checks; the relaunch itself lives with `start` in session-launcher.ts.
import { realpath } from 'node:fs/promises';
import { Limits, isOpaqueId, type Activity, type EdgeAgentRPCRequest, type Installation } from '#contracts';
import { EdgeStatusError } from '../common/edge-errors.js';
import { utf8Bytes } from '../common/utf8.js';
import { activityDetailBytes } from './activity-log.js';
import type { AgentBinding } from './bindings.js';
import type { RestoredMessage } from './transcript-window.js';

/** The display state a resume seed carries (checked here). */
export interface RestoredDisplay {
  revision: number;
  window: number;
  truncated: boolean;
  /** Wall-clock ms of the original `started_at`. */
  startedAt?: number;
  title?: string;
  model?: string;
  messages: RestoredMessage[];
  activities: Activity[];
}

const SEED_ROLES: ReadonlySet<string> = new Set(['user', 'assistant']);

function invalid(message: string): EdgeStatusError {
  return new EdgeStatusError('invalid_request', message);
}

/**
 * The display state of the seed, or `invalid_request` when the seed does not belong to this
 * request or breaks a display bound (it came from Tether's own history, so this is a guard
 * against corruption, not against users).
 */
export function checkResumeSeed(rpc: EdgeAgentRPCRequest): RestoredDisplay {
  const seed = rpc.resume;
  const request = rpc.request;
  if (!seed) throw invalid('resume needs its seed.');
  if (seed.session_id !== request.session_id) throw invalid('The seed is for another session.');
  if (!isOpaqueId(request.access_id ?? '')) throw invalid('resume needs a saved access.');
  if (!Number.isSafeInteger(seed.revision) || seed.revision <= 0)
    throw invalid('The seed revision must be positive.');

  const messages = seed.messages ?? [];
  if (messages.length > Limits.MESSAGES_MAX) throw invalid('The seed has too many messages.');
  let textBytes = 0;
  for (const message of messages) {
    if (!SEED_ROLES.has(message.role)) throw invalid('A seed message has an unknown role.');
    textBytes += utf8Bytes(message.text ?? '');
  }
  if (textBytes > Limits.MESSAGES_TEXT_MAX_BYTES) throw invalid('The seed messages are too large.');

  const activities = seed.activities ?? [];
  if (activities.length > Limits.ACTIVITIES_MAX) throw invalid('The seed has too many activities.');
  const detailBytes = activities.reduce((sum, activity) => sum + activityDetailBytes(activity), 0);
  if (detailBytes > Limits.ACTIVITY_WINDOW_MAX_BYTES)
    throw invalid('The seed activity details are too large.');

  let startedAt: number | undefined;
  if (seed.started_at !== undefined) {
    startedAt = Date.parse(seed.started_at);
    if (!Number.isFinite(startedAt)) throw invalid('The seed started_at is not a time.');
  }

  return {
    revision: seed.revision,
    window: seed.window ?? 0,
    truncated: seed.truncated ?? false,
    startedAt,
    title: seed.title,
    model: seed.model || undefined,
    messages: messages.map((message) => ({
      role: message.role as 'user' | 'assistant',
      text: message.text ?? '',
      ...(message.attachments ? { attachments: message.attachments } : {}),
    })),
    activities,
  };
}

const unavailable = (message: string): EdgeStatusError => new EdgeStatusError('resume_unavailable', message);

/**
 * The relaunch preconditions of a binding (reference §2.3): the saved access still points at the
 * project the session started under, the session directory still resolves to itself, and the
 * installation is still discovered, as the agent kind it ran with. Returns the installation to relaunch.
 */
export async function checkBinding(
  binding: AgentBinding | undefined,
  projectRoot: string | undefined,
  installations: () => Promise<Installation[]>,
): Promise<Installation> {
  if (!binding) throw unavailable('Nothing to resume for this owner, access and session.');
  const resolve = async (path: string | undefined): Promise<string | undefined> => {
    if (!path) return undefined;
    try {
      return await realpath(path);
    } catch {
      return undefined;
    }
  };
  if ((await resolve(projectRoot)) !== binding.access_project)
    throw unavailable('The saved access now names another project.');
  if ((await resolve(binding.project)) !== binding.project)
    throw unavailable('The session directory moved or is gone.');
  const installation = (await installations()).find(
    (candidate) =>
      candidate.id === binding.installation_id &&
      (binding.kind === undefined || candidate.kind === binding.kind),
  );
  if (!installation) throw unavailable('The installation the session ran with is gone.');
  return installation;
}
